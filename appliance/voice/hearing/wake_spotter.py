"""A keyword spotter for the wake phrase, on audio alone (so never on what the screen shows).

openWakeWord's recipe: a melspectrogram and Google's speech embedding (the tflite models that
pyopen-wakeword ships, trained on far more real voices than any corpus made here), then a small
network trained for one phrase by appliance_lab.tuning.wake_spotter_train. Another phrase has
no spotter.
"""

from __future__ import annotations

import ctypes
import math
import threading
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

SPOTTER_FILE = Path(__file__).with_name("wake_spotter.npz")
RATE = 16000
LEAD_S = 2.0
"""Silence put before the utterance, as openWakeWord's stream starts on 8 s of it: a window
must be able to end just after a wake phrase said at the very start."""
WINDOW = 16
"""Embeddings per window (one per 80 ms, each of the 775 ms before it), as openWakeWord's."""
ENDS = range(26, 44)
"""The windows scored, by their last embedding: ending 0.6 to 2.0 s into the utterance as the
VAD hands it over (0.3 s of pre-roll, stt_whisper.PREROLL_S), where the wake phrase ends."""
FEATURES = 96
MEL_BINS = 32
MEL_FRAMES = 76  # melspectrogram frames per embedding
MEL_STEP = 8  # frames from one embedding to the next
MEL_WINDOW, MEL_HOP = 512, 160
"""Samples a melspectrogram frame reads (its FFT's, not openWakeWord's 25 ms: the model gives
1 + (n - 512) // 160 frames of n samples), and from one frame to the next."""
FIRST = ENDS[0] - WINDOW + 1
"""The first embedding a scored window reads."""
HEARD_BYTES = ((ENDS[-1] * MEL_STEP + MEL_FRAMES - 1) * MEL_HOP + MEL_WINDOW
               - int(LEAD_S * RATE)) * 2
"""How much of an utterance (PCM16 bytes, 2.2 s) the last scored window reads: a longer one's
score is known once this much of it is heard."""

Floats = npt.NDArray[np.float32]


class SpeechEmbedding:
    """pyopen-wakeword's two feature models, run on a whole utterance at once."""

    def __init__(self) -> None:
        from pyopen_wakeword.openwakeword import _MODELS_DIR, _find_tensorflowlite_c
        from pyopen_wakeword.wakeword import TfLiteWakeWord

        # The package's base class declares the C library's signatures.
        self._lib: Any = TfLiteWakeWord(_find_tensorflowlite_c()).lib
        self._mel = self._interpreter(_MODELS_DIR / "melspectrogram.tflite")
        self._emb = self._interpreter(_MODELS_DIR / "embedding_model.tflite")
        self._shapes: dict[int, tuple[int, ...]] = {}
        # One per process, and an interpreter is not thread-safe: an embedding computed ahead
        # may still run when the next pipeline's hearing thread starts.
        self._lock = threading.Lock()

    def _interpreter(self, path: Path) -> Any:
        lib = self._lib
        return lib.TfLiteInterpreterCreate(lib.TfLiteModelCreateFromFile(str(path).encode()),
                                           None)

    def _run(self, interpreter: Any, x: npt.NDArray[np.floating[Any]]) -> Floats:
        with self._lock:
            return self._invoke(interpreter, np.ascontiguousarray(x, dtype=np.float32))

    def _invoke(self, interpreter: Any, x: npt.NDArray[np.float32]) -> Floats:
        lib = self._lib
        if self._shapes.get(interpreter) != x.shape:
            dims = (ctypes.c_int32 * x.ndim)(*x.shape)
            lib.TfLiteInterpreterResizeInputTensor(interpreter, 0, dims, x.ndim)
            lib.TfLiteInterpreterAllocateTensors(interpreter)
            self._shapes[interpreter] = x.shape
        tensor = lib.TfLiteInterpreterGetInputTensor(interpreter, 0)
        lib.TfLiteTensorCopyFromBuffer(tensor, x.ctypes.data_as(ctypes.c_void_p), x.nbytes)
        lib.TfLiteInterpreterInvoke(interpreter)
        out = lib.TfLiteInterpreterGetOutputTensor(interpreter, 0)
        y = np.empty(lib.TfLiteTensorByteSize(out) // 4, dtype=np.float32)
        lib.TfLiteTensorCopyToBuffer(out, y.ctypes.data_as(ctypes.c_void_p), y.nbytes)
        return y

    def embed(self, pcm: bytes, first: int = 0, last: int | None = None) -> Floats:
        """(embeddings, 96) of 16 kHz PCM16 after LEAD_S of silence, one per 80 ms: those from
        `first` to `last` (all there are when None); the others are never computed."""
        return self.embed_windows(self.windows(pcm, first, last))

    def windows(self, pcm: bytes, first: int = 0, last: int | None = None) -> Floats:
        """The melspectrogram windows `embed` reads, one an embedding (cheap beside the
        embeddings themselves)."""
        samples = np.frombuffer(pcm, dtype="<i2").astype(np.float32)  # int16 scale, as trained
        audio = np.concatenate([np.zeros(int(LEAD_S * RATE), np.float32), samples])
        there = ((len(audio) - MEL_WINDOW) // MEL_HOP + 1 - MEL_FRAMES) // MEL_STEP + 1
        last = there - 1 if last is None else min(last, there - 1)
        if last < first:
            return np.zeros((0, MEL_FRAMES, MEL_BINS, 1), np.float32)
        # A melspectrogram frame reads its own 32 ms: the audio they need is enough.
        start = first * MEL_STEP * MEL_HOP
        end = ((last * MEL_STEP + MEL_FRAMES - 1) * MEL_HOP) + MEL_WINDOW
        # openWakeWord's scaling of the melspectrogram into the embedding's range.
        mels = self._run(self._mel, audio[None, start:end]).reshape(-1, MEL_BINS) / 10 + 2
        starts = range(0, len(mels) - MEL_FRAMES + 1, MEL_STEP)
        return np.asarray(np.stack([mels[s:s + MEL_FRAMES] for s in starts])[:, :, :, None],
                          dtype=np.float32)

    def embed_windows(self, windows: Floats) -> Floats:
        """(embeddings, 96) of melspectrogram windows."""
        if len(windows) == 0:
            return np.zeros((0, FEATURES), np.float32)
        return self._run(self._emb, windows).reshape(-1, FEATURES)


@cache
def speech_embedding() -> SpeechEmbedding:
    """One per process: loading the models takes longer than using them."""
    return SpeechEmbedding()


def windows(embeddings: Floats, first: int = 0) -> Floats:
    """The ENDS windows there are, each flattened (WINDOW x 96), of embeddings from `first` on;
    none for a sound too short to hold the wake phrase."""
    ends = [j - first for j in ENDS if j - first < len(embeddings)]
    flat = [embeddings[j - WINDOW + 1:j + 1].reshape(-1) for j in ends]
    return np.stack(flat) if flat else np.zeros((0, WINDOW * FEATURES), np.float32)


@dataclass(frozen=True)
class WakeSpotter:
    """Log-odds that an utterance starts with `phrase`: the best of its ENDS windows through
    one hidden layer (ReLU)."""

    phrase: str
    mean: Floats
    scale: Floats
    hidden: Floats
    hidden_bias: Floats
    out: Floats
    out_bias: float
    _known: dict[bytes, float] = field(default_factory=dict, compare=False, repr=False)
    # The last utterance's melspectrogram windows and their embeddings, as it grows.
    _last: list[tuple[Floats, Floats]] = field(default_factory=list, compare=False, repr=False)

    def logits(self, x: Floats) -> Floats:
        h = np.maximum(((x - self.mean) / self.scale) @ self.hidden + self.hidden_bias, 0)
        return np.asarray(h @ self.out + self.out_bias, dtype=np.float32)

    def score_embeddings(self, embeddings: Floats, first: int = 0) -> float:
        """From the embeddings of one utterance, `first` the index of the first given."""
        scores = self.logits(windows(embeddings, first))
        return float(scores.max()) if len(scores) else -math.inf

    def score(self, pcm: bytes) -> float:
        """The utterance's log-odds. The last score is remembered: the pipeline scores an
        utterance as it grows, while the person is still speaking."""
        # A shorter one is scored as a stream would go on after it, in silence. Otherwise it has
        # no window ending where training's positives end (1.19 s in and later): Piper's lone
        # "Hey juniper." heard early (1.16 s) scored 4.0, and over a reply below the veto.
        heard = pcm[:HEARD_BYTES]
        heard += bytes(HEARD_BYTES - len(heard))
        if heard not in self._known:
            embedded = self._embedded(heard)
            self._known.clear()
            self._known[heard] = self.score_embeddings(embedded, FIRST)
        return self._known[heard]

    def _embedded(self, heard: bytes) -> Floats:
        """The embeddings the scored windows read; one whose melspectrogram window is the same
        as when the utterance was scored shorter is not computed again (the same input gives
        the same embedding)."""
        embedder = speech_embedding()
        windows = embedder.windows(heard, FIRST, ENDS[-1])
        if self._last and self._last[0][0].shape == windows.shape:
            old_windows, old = self._last[0]
            same = np.all(old_windows == windows, axis=(1, 2, 3))
        else:
            old, same = np.zeros((len(windows), FEATURES), np.float32), np.zeros(len(windows), bool)
        embedded = old.copy()
        if not same.all():
            embedded[~same] = embedder.embed_windows(windows[~same])
        self._last[:] = [(windows, embedded)]
        return embedded

    def save(self, path: Path = SPOTTER_FILE) -> None:
        np.savez(path, phrase=np.array(self.phrase), mean=self.mean, scale=self.scale,
                 hidden=self.hidden, hidden_bias=self.hidden_bias, out=self.out,
                 out_bias=np.array(self.out_bias))

    @classmethod
    def load(cls, phrase: str, path: Path = SPOTTER_FILE) -> WakeSpotter | None:
        """The spotter trained for `phrase`, or None when there is none for it (or
        pyopen-wakeword, whose models it reads, is not installed)."""
        try:
            import pyopen_wakeword  # noqa: F401
        except ImportError:
            return None
        if not path.is_file():
            return None
        with np.load(path) as data:
            if str(data["phrase"]) != phrase:
                return None
            return cls(phrase, data["mean"], data["scale"], data["hidden"],
                       data["hidden_bias"], data["out"], float(data["out_bias"]))
