"""`appliance central serve`: the HTTPS endpoint kiosks join and push their batches to.
(No `from __future__ import annotations`: FastAPI reads the routes' local annotations.)"""

import base64
import logging
import sys
from pathlib import Path
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Header, HTTPException, Query, Request, Response
from fastapi.concurrency import run_in_threadpool
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from appliance.fleet.batch_checks import OutOfOrder, Replayed, Unverified
from appliance.fleet.central_store import CentralStore, Revoked, Unauthorized
from appliance.fleet.refusals import Refusal, log
from appliance.fleet.wire import Batch, Joined, JoinRequest, Position

MAX_BODY = 64 << 20
"""Bytes in one request at most: a full batch of the largest events the journal keeps."""


def create_central_app(store: CentralStore) -> FastAPI:
    app = FastAPI(title="appliance central", docs_url=None, redoc_url=None, openapi_url=None)

    @app.middleware("http")
    async def refusals_told(request: Request, call_next: Any) -> Response:
        """Every refused request is logged, counted and, past a threshold, alerted."""
        response: Response = _unbounded(request) or await call_next(request)
        if 400 <= response.status_code < 500:
            refusal = Refusal(
                status=response.status_code,
                reason=getattr(request.state, "reason", "") or "refused",
                address=request.client.host if request.client else "unknown",
                kiosk=getattr(request.state, "kiosk", None), path=request.url.path,
                alert=getattr(request.state, "alert", ""))
            log.warning(refusal.line())
            await run_in_threadpool(_counted, store, refusal)
        return response

    @app.exception_handler(StarletteHTTPException)
    async def refused(request: Request, e: StarletteHTTPException) -> Response:
        request.state.reason = str(e.detail)
        return JSONResponse({"detail": e.detail}, status_code=e.status_code, headers=e.headers)

    @app.exception_handler(RequestValidationError)
    async def malformed(request: Request, e: RequestValidationError) -> Response:
        """One line naming the first bad field; never the value sent (it may be a token)."""
        errors = e.errors()
        first = errors[0] if errors else {}
        where = ".".join(str(part)[:40] for part in first.get("loc", ()))
        reason = f"{where}: {first.get('msg', 'malformed')}"
        if len(errors) > 1:
            reason += f" (and {len(errors) - 1} more)"
        request.state.reason = reason
        return JSONResponse({"detail": reason}, status_code=422)

    def kiosk(request: Request, authorization: Annotated[str, Header()] = "") -> str:
        """The kiosk is whoever holds the credential: never a name the request gives."""
        scheme, _, credential = authorization.partition(" ")
        if scheme != "Bearer" or not credential:
            raise HTTPException(401, "a kiosk credential is needed")
        try:  # a batch marks its kiosk seen in its own transaction
            request.state.kiosk = store.kiosk_for(credential, seen=request.method != "POST")
        except Unauthorized as e:
            raise HTTPException(401, str(e)) from None
        except Revoked as e:
            request.state.kiosk = e.kiosk
            raise HTTPException(403, str(e)) from None
        return str(request.state.kiosk)

    Kiosk = Annotated[str, Depends(kiosk)]

    @app.post("/v1/join")
    def join(request: JoinRequest) -> Joined:
        secret = request.token.rpartition(".")[0] or request.token
        try:
            name, credential = store.join(secret, base64.b64decode(request.public_key))
        except Unauthorized as e:
            raise HTTPException(401, str(e)) from None
        return Joined(kiosk=name, credential=credential)

    @app.get("/v1/health")
    def health() -> JSONResponse:
        """Unauthenticated and cheap: what an uplink backing off asks to know the server is
        back (its database too), so it need not wait out the back-off."""
        alive = store.alive()
        return JSONResponse({"ok": alive}, status_code=200 if alive else 503)

    @app.get("/v1/position")
    def position(name: Kiosk, epoch: Annotated[str, Query(pattern=r"^[0-9a-f]{32}$")]) -> Position:
        held, link = store.held(name, epoch)
        return Position(kiosk=name, epoch=epoch, position=held, link=link)

    @app.post("/v1/batches", response_model=None)
    def batches(request: Request, name: Kiosk, batch: Batch) -> Position | JSONResponse:
        try:
            held = store.ingest(name, batch)
        except OutOfOrder as e:
            request.state.reason = str(e)
            if isinstance(e, Replayed) and e.old:
                request.state.alert = f"an old batch was sent again: {e}"
            return JSONResponse({"detail": str(e), "position": e.position}, status_code=409)
        except Unverified as e:
            request.state.alert = str(e)
            raise HTTPException(e.status, str(e)) from None
        return Position(kiosk=name, epoch=batch.epoch, position=held)

    return app


def _unbounded(request: Request) -> Response | None:
    """A body is read whole before it is checked: its size is refused first."""
    if request.method != "POST":
        return None
    length = request.headers.get("content-length", "")
    reason = ("a body needs its length" if not length.isdigit()
              else "the batch is too large" if int(length) > MAX_BODY else "")
    if not reason:
        return None
    request.state.reason = reason
    return JSONResponse({"detail": reason}, status_code=411 if not length.isdigit() else 413)


def _counted(store: CentralStore, refusal: Refusal) -> None:
    try:
        store.refused(refusal)
    except Exception as e:  # PostgreSQL away: the line above is logged all the same
        log.warning("could not count the refusal above: %s", type(e).__name__)


def run_central(url: str, host: str, port: int, cert: Path, key: Path) -> None:
    """Serve over TLS only, with the certificate `enroll` pins into each token."""
    import uvicorn

    told = logging.StreamHandler(sys.stderr)
    told.setFormatter(logging.Formatter("%(message)s"))
    log.addHandler(told)
    log.setLevel(logging.INFO)
    log.propagate = False
    store = CentralStore(url)
    print(f"appliance central: https://{host}:{port}/", file=sys.stderr, flush=True)
    try:
        uvicorn.run(create_central_app(store), host=host, port=port, log_level="warning",
                    server_header=False, timeout_graceful_shutdown=2,
                    ssl_certfile=str(cert), ssl_keyfile=str(key))
    finally:
        store.close()
