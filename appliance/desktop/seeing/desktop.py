"""A desktop adapter that also sees: around another adapter (AT-SPI), it adds what the active
window shows when its application says little, and clicks what it saw, verified by looking
again."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Protocol
from uuid import uuid4

from appliance.desktop.actionable import actionable
from appliance.desktop.model import Action, ActionResult, Desktop, DesktopError, Node, Snapshot
from appliance.desktop.seeing.capture import KIOSK_APP, Box, WindowInfo
from appliance.desktop.seeing.fingerprint import (
    BLANK,
    SAME_WITHIN,
    SIDE,
    average_hash,
    distance,
    same,
)
from appliance.desktop.seeing.ocr import Reading, read_image
from appliance.desktop.seeing.taught import (
    SEEN_ROLE,
    TaughtTarget,
    seen_refusal,
    taught_node,
)

if TYPE_CHECKING:
    from PIL.Image import Image

MIN_TREE_CONTROLS = 3
"""Fewer controls than this in the active window's tree and the window is also read from the
screen: a window that offers a handful is one a person can work with by name."""
VERIFY_TIMEOUT_S = 1.5
"""How long to look for what a click changed before calling it a miss."""
CHANGED_PIXELS = 12
"""Pixels outside the clicked element that must change for the click to have done something;
the element itself is left out, since the pointer resting on it lights it up."""
CHANGE_LEVEL = 32
"""A grey change of more than this (of 255) is a change, not anti-aliasing noise."""
AROUND_TARGET = 4


class Eyes(Protocol):
    """What captures the screen (capture.X11Capture on X11, capture.WaylandCapture under the
    kiosk's compositor). `whole_output`: the window is the whole output, one application's,
    and the eyes cannot tell which (a kiosk): AT-SPI names it, when it can."""

    whole_output: bool

    def active_window(self) -> WindowInfo | None: ...

    def grab(self, box: Box) -> Image: ...


class Memory(Protocol):
    """What the journal keeps for seeing: the caregiver's "read it from the screen" apps and
    the taught targets (journal/taught_log.py)."""

    def read_from_screen(self) -> frozenset[str]: ...

    def taught(self) -> list[TaughtTarget]: ...

    def teach(self, target: TaughtTarget) -> None: ...

    def used(self, target_id: str, hit: bool) -> None: ...


Click = Callable[[int, int], str]
"""Click at a point on screen; returns how (uinput or atspi)."""
Read = Callable[["Image"], Reading]


@dataclass
class Look:
    """One capture of a window and what was read in it."""

    window: WindowInfo
    image: Image
    digest: str
    reading: Reading


class SeeingDesktop:
    """The `Desktop` protocol over another adapter, with seen and taught elements added."""

    def __init__(
        self, inner: Desktop, eyes: Eyes, click: Click, memory: Memory | None = None, *,
        min_controls: int = MIN_TREE_CONTROLS, verify_timeout: float = VERIFY_TIMEOUT_S,
        read: Read = read_image,
    ) -> None:
        self.inner = inner
        self.eyes = eyes
        self.click = click
        self.memory = memory
        self.min_controls = min_controls
        self.verify_timeout = verify_timeout
        self.read = read
        self._look: Look | None = None
        self._last: Snapshot | None = None
        self._taught: dict[str, TaughtTarget] = {}

    def __getattr__(self, name: str) -> Any:
        # Whatever else callers reach for (the AT-SPI adapter's screen, bus, devices) is the
        # inner adapter's: seeing adds elements, it does not replace the adapter.
        return getattr(self.inner, name)

    # -- the protocol --------------------------------------------------------------------

    def problems(self) -> list[str]:
        return self.inner.problems()

    def snapshot(self) -> Snapshot:
        snap = self.inner.snapshot()
        self._last = snap
        try:
            window = self.eyes.active_window()
        except DesktopError:
            return snap
        if window is None:
            return snap
        if self.eyes.whole_output:
            window = kiosk_window(window, snap)
        in_tree = snap.active_window is not None and window.title == snap.active_window
        app = (snap.active_app or window.app) if in_tree else window.app
        if in_tree:
            marked = app.casefold() in self._screen_apps()
            if not marked and len(actionable(snap)) >= self.min_controls:
                return snap
        try:
            look = self._see(window)
        except DesktopError:
            return snap
        told = {n.name.casefold() for n in snap.in_active_window() if n.name} if in_tree else set()
        added = self._elements(look, app, window.title, told)
        self._last = Snapshot(
            nodes=(*snap.nodes, *added),
            applications=snap.applications if app in snap.applications
            else (*snap.applications, app),
            launchable=snap.launchable, active_app=app, active_window=window.title,
            keystrokes=snap.keystrokes,
        )
        return self._last

    def perform(self, action: Action) -> ActionResult:
        target = action.target or ""
        if not target.startswith(("seen:", "taught:")):
            return self.inner.perform(action)
        node = self._last.node(target) if self._last is not None else None
        if node is None:
            node = self.snapshot().node(target)
        if node is None or node.bounds is None:
            raise DesktopError("That is no longer on the screen.")
        if action.kind not in ("activate", "click_at"):
            raise DesktopError(f"I can only click {node.name}: the application doesn't say "
                               "what it is.")
        x, y, w, h = node.bounds
        point = action.point if action.kind == "click_at" and action.point else (
            x + w // 2, y + h // 2)
        return self._click(node, point)

    # -- seeing --------------------------------------------------------------------------

    def _screen_apps(self) -> frozenset[str]:
        if self.memory is None:
            return frozenset()
        return frozenset(a.casefold() for a in self.memory.read_from_screen())

    def _see(self, window: WindowInfo) -> Look:
        """The window captured now; read again only when its pixels changed since last time."""
        image = self.eyes.grab(window.bounds)
        digest = hashlib.blake2b(image.tobytes(), digest_size=16).hexdigest()
        last = self._look
        if last is not None and last.digest == digest and last.window.bounds == window.bounds:
            self._look = Look(window, image, digest, last.reading)
        else:
            self._look = Look(window, image, digest, self.read(image))
        return self._look

    def _elements(self, look: Look, app: str, title: str, told: set[str]) -> list[Node]:
        """Taught targets that still look the same here, then what was read, minus what the
        tree already names and what a taught target stands on."""
        nodes: list[Node] = []
        wx, wy = look.window.bounds[:2]
        self._taught = {}
        for t in self.memory.taught() if self.memory is not None else []:
            if t.app != app or t.window != title or not t.fits(look.window.bounds):
                continue
            gap = distance(t.fingerprint, self._fingerprint(look.image, t.offset))
            self._taught[t.id] = t
            nodes.append(taught_node(t, app, title, t.placed(look.window.bounds),
                                     1 - gap / (SIDE * SIDE), gap <= SAME_WITHIN))
        standing = [n.bounds for n in nodes if not n.states and n.bounds]
        for i, p in enumerate(look.reading.phrases):
            bounds = (wx + p.box[0], wy + p.box[1], p.box[2], p.box[3])
            if p.text.casefold() in told or any(_inside(_middle(bounds), b) for b in standing):
                continue
            nodes.append(Node(id=f"seen:{i}", role=SEEN_ROLE, name=p.text, app=app,
                              window=title, bounds=bounds, source="seen",
                              confidence=round(p.confidence, 3)))
        return nodes

    @staticmethod
    def _fingerprint(image: Image, offset: Box) -> str:
        x, y, w, h = offset
        return average_hash(image.crop((x, y, x + w, y + h)))

    # -- clicking and looking again ------------------------------------------------------

    def _click(self, node: Node, point: tuple[int, int]) -> ActionResult:
        window = self.eyes.active_window()
        if window is None:
            raise DesktopError("I can't see which window is in front.")
        before = self.eyes.grab(window.bounds)
        taught = self._taught.get(node.id.removeprefix("taught:"))
        if node.source == "taught":
            refusal = seen_refusal(node)
            if taught is None or refusal is not None:
                raise DesktopError(refusal or f"I can't find {node.name} any more.")
            # Looked at again just before the click: the screen may have changed since the
            # snapshot the plan was checked against (a yes said a while later).
            if not same(taught.fingerprint, self._fingerprint(before, taught.offset)):
                raise DesktopError(f"{node.name} doesn't look as it did when you taught it, "
                                   "so I didn't click it.")
        via = self.click(*point)
        hit, detail = self._changed(window, before, node)
        if taught is not None and self.memory is not None:
            self.memory.used(taught.id, hit)
        return ActionResult(verified=hit, via=via, detail=detail)

    def _changed(self, window: WindowInfo, before: Image, node: Node) -> tuple[bool, str]:
        """Whether the window shows a change outside the clicked element, looking again until
        it does or the time is up; a window that went or gave way to another is a change."""
        assert node.bounds is not None
        x, y, w, h = node.bounds
        left, top = x - window.bounds[0] - AROUND_TARGET, y - window.bounds[1] - AROUND_TARGET
        own = (left, top, left + w + 2 * AROUND_TARGET, top + h + 2 * AROUND_TARGET)
        deadline = time.monotonic() + self.verify_timeout
        while True:
            time.sleep(0.1)
            now = self.eyes.active_window()
            if now is None or now.xid != window.xid:
                self._look = None
                return True, "its window closed or another came in front"
            after = self.eyes.grab(window.bounds)
            if after.size == before.size and _changed_pixels(before, after, own) >= CHANGED_PIXELS:
                look = self._see(now)
                texts = {p.text.casefold() for p in look.reading.phrases}
                gone = node.value or node.name
                said = f"{gone} went away" if str(gone).casefold() not in texts else (
                    "the window changed")
                return True, f"clicked {node.name}; {said}"
            if time.monotonic() >= deadline:
                return False, f"clicked {node.name}, but nothing in the window changed"

    # -- teaching ------------------------------------------------------------------------

    def teach(self, name: str, box: Box, by: str) -> TaughtTarget:
        """Remember the spot `box` on screen as `name` for the active window."""
        if self.memory is None:
            raise DesktopError("I have nowhere to remember that.")
        snap = self.snapshot()
        window = self.eyes.active_window()
        if window is None or snap.active_app is None or snap.active_window is None:
            raise DesktopError("I can't see which window that is in.")
        wx, wy, ww, wh = window.bounds
        left, top = max(box[0] - wx, 0), max(box[1] - wy, 0)
        right, bottom = min(box[0] + box[2] - wx, ww), min(box[1] + box[3] - wy, wh)
        if right - left < 2 or bottom - top < 2:
            raise DesktopError("That spot is outside the window.")
        offset = (left, top, right - left, bottom - top)
        look = self._see(window)
        fingerprint = self._fingerprint(look.image, offset)
        if fingerprint == BLANK:
            raise DesktopError("There's nothing at that spot I could know again.")
        text = " ".join(p.text for p in look.reading.phrases
                        if _inside(_middle(_shifted(p.box, wx, wy)), box))
        target = TaughtTarget(id=uuid4().hex[:12], app=snap.active_app,
                              window=snap.active_window, name=name, offset=offset, text=text,
                              fingerprint=fingerprint, by=by)
        self.memory.teach(target)
        return target


def kiosk_window(window: WindowInfo, snap: Snapshot) -> WindowInfo:
    """The kiosk's output as the one application's window: named by AT-SPI's active
    application and window when the tree has them, else the kiosk's application (one name
    that stays, so what is taught on it is found again)."""
    return replace(window, app=snap.active_app or KIOSK_APP,
                   title=snap.active_window or window.title)


def _changed_pixels(before: Image, after: Image, skip: tuple[int, int, int, int]) -> int:
    from PIL import ImageChops, ImageDraw

    diff = ImageChops.difference(before.convert("L"), after.convert("L"))
    ImageDraw.Draw(diff).rectangle(skip, fill=0)
    histogram = diff.histogram()
    return sum(histogram[CHANGE_LEVEL + 1:])


def _shifted(box: Box, dx: int, dy: int) -> Box:
    return box[0] + dx, box[1] + dy, box[2], box[3]


def _middle(box: Box) -> tuple[int, int]:
    return box[0] + box[2] // 2, box[1] + box[3] // 2


def _inside(point: tuple[int, int], box: Box) -> bool:
    return box[0] <= point[0] < box[0] + box[2] and box[1] <= point[1] < box[1] + box[3]


def seeing(inner: Desktop, click: Click) -> Desktop:
    """`inner` with seeing added where there is a screen to see (an X display, or a Wayland
    compositor with screencopy: the kiosk's cage); `inner` as it is where there is none or the
    libraries or grim are missing. Under Wayland clicks go through seeing's own uinput pointer
    (pointer.py), not `click`."""
    from appliance.desktop.seeing.capture import WaylandCapture, open_eyes
    from appliance.desktop.seeing.pointer import OutputPointer

    try:
        eyes = open_eyes()
    except DesktopError:
        return inner
    if isinstance(eyes, WaylandCapture):
        click = OutputPointer(eyes.size).click
    return SeeingDesktop(inner, eyes, click)
