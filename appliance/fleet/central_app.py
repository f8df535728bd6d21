"""`appliance central serve`: the HTTPS endpoint kiosks join and push their batches to.
(No `from __future__ import annotations`: FastAPI reads the routes' local annotations.)"""

import sys
from pathlib import Path
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Header, HTTPException, Query, Request, Response
from fastapi.responses import JSONResponse

from appliance.fleet.central_store import CentralStore, OutOfOrder, Revoked, Unauthorized
from appliance.fleet.wire import Batch, Joined, JoinRequest, Position

MAX_BODY = 64 << 20
"""Bytes in one request at most: a full batch of the largest events the journal keeps."""


def create_central_app(store: CentralStore) -> FastAPI:
    app = FastAPI(title="appliance central", docs_url=None, redoc_url=None, openapi_url=None)

    @app.middleware("http")
    async def bounded(request: Request, call_next: Any) -> Response:
        """A body is read whole before it is checked: its size is refused first."""
        if request.method == "POST":
            length = request.headers.get("content-length", "")
            if not length.isdigit():
                return JSONResponse({"detail": "a body needs its length"}, status_code=411)
            if int(length) > MAX_BODY:
                return JSONResponse({"detail": "the batch is too large"}, status_code=413)
        response: Response = await call_next(request)
        return response

    def kiosk(request: Request, authorization: Annotated[str, Header()] = "") -> str:
        """The kiosk is whoever holds the credential: never a name the request gives."""
        scheme, _, credential = authorization.partition(" ")
        if scheme != "Bearer" or not credential:
            raise HTTPException(401, "a kiosk credential is needed")
        try:  # a batch marks its kiosk seen in its own transaction
            return store.kiosk_for(credential, seen=request.method != "POST")
        except Unauthorized as e:
            raise HTTPException(401, str(e)) from None
        except Revoked as e:
            raise HTTPException(403, str(e)) from None

    Kiosk = Annotated[str, Depends(kiosk)]

    @app.post("/v1/join")
    def join(request: JoinRequest) -> Joined:
        secret = request.token.rpartition(".")[0] or request.token
        try:
            name, credential = store.join(secret)
        except Unauthorized as e:
            raise HTTPException(401, str(e)) from None
        return Joined(kiosk=name, credential=credential)

    @app.get("/v1/position")
    def position(name: Kiosk, epoch: Annotated[str, Query(pattern=r"^[0-9a-f]{32}$")]) -> Position:
        held, link = store.held(name, epoch)
        return Position(kiosk=name, epoch=epoch, position=held, link=link)

    @app.post("/v1/batches", response_model=None)
    def batches(name: Kiosk, batch: Batch) -> Position | JSONResponse:
        try:
            held = store.ingest(name, batch)
        except OutOfOrder as e:
            return JSONResponse({"detail": str(e), "position": e.position}, status_code=409)
        return Position(kiosk=name, epoch=batch.epoch, position=held)

    return app


def run_central(url: str, host: str, port: int, cert: Path, key: Path) -> None:
    """Serve over TLS only, with the certificate `enroll` pins into each token."""
    import uvicorn

    store = CentralStore(url)
    print(f"appliance central: https://{host}:{port}/", file=sys.stderr, flush=True)
    try:
        uvicorn.run(create_central_app(store), host=host, port=port, log_level="warning",
                    server_header=False, timeout_graceful_shutdown=2,
                    ssl_certfile=str(cert), ssl_keyfile=str(key))
    finally:
        store.close()
