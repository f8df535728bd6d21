"""`appliance bench voice`, section `barge_in`: how fast "stop" stops a reply, whether the
appliance ever interrupts or answers itself, and what the echo canceller removes and costs.

Everything goes through the simulated room (appliance/voice/audio/room.py) with the appliance's own
Piper voice as the echo and espeak-ng or Piper saying "stop".
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from appliance.voice.audio.pcm import PIPELINE_RATE, Pcm
from appliance.voice.audio.sources import CHUNK_SAMPLES
from appliance.voice.sink import Reply, Utterance

# A few sentences the appliance might read out; repeated to make minutes of its own voice.
READ_OUT = (
    "Here is your message from Grandma. She says the garden is full of roses this year, and the "
    "apple tree finally gave fruit. Your cousin visited on Sunday and we played cards until late. "
    "Please call me when you have time. There is no need to cancel the doctor on Tuesday. "
    "Say yes or no if you want me to read it again."
)
STOP_TRIALS = 10
WAKE_PHRASE = "hey juniper"
GOAL_STOP_P95_MS = 300


class _ReadingSink:
    """Every command is answered with `reply`; keeps what `spoke` records."""

    def __init__(self, reply: str) -> None:
        self.reply = reply
        self.heard: list[Utterance] = []
        self.spoken: list[dict[str, float]] = []

    def vocabulary(self) -> list[str]:
        return ["Messages", "Grandma", "read"]

    def handle(self, utterance: Utterance) -> Reply:
        self.heard.append(utterance)
        return Reply(f"b{len(self.heard)}", self.reply, False)

    def spoke(self, turn_id: str, text: str, timings: dict[str, float]) -> None:
        self.spoken.append(timings)


def voiced(pcm: bytes) -> tuple[int, int]:
    """Where speech starts and ends in `pcm`: the first sample above a quiet floor and the one
    after the last, (0, 0) for none."""
    loud = np.nonzero(np.abs(np.frombuffer(pcm, dtype="<i2")) > 300)[0]
    return (int(loud[0]), int(loud[-1]) + 1) if loud.size else (0, 0)


def echo_figures(seconds: float = 60.0) -> dict[str, Any]:
    """ERLE (dB) of each canceller that is installed, on the appliance's voice through the room,
    alone and with the residual gate, and its CPU cost (process time / audio time, one core)."""
    from appliance.voice.audio.echo import ENGINE, EchoCanceller, SpeexCanceller, WebRTCCanceller
    from appliance.voice.audio.room import SimulatedRoom
    from appliance.voice.commands import speech_pcm

    one = speech_pcm(READ_OUT)
    size = int(seconds * PIPELINE_RATE) * 2
    far = (one * (size // len(one) + 1))[:size]
    audio_s = len(far) / 2 / PIPELINE_RATE
    engines: dict[str, Any] = {}
    for kind in (SpeexCanceller, WebRTCCanceller):
        try:
            cancellers = {"alone": EchoCanceller(kind(), gate=False), "gate": EchoCanceller(kind())}
        except ImportError:
            engines[kind.name] = "not installed"
            continue
        room = SimulatedRoom(Pcm(bytes(len(far)), PIPELINE_RATE))
        step = CHUNK_SAMPLES * 2
        heard = 0.0
        through = 0  # 20 ms chunks of echo the gate let through
        residual = dict.fromkeys(cancellers, 0.0)
        cpu = dict.fromkeys(cancellers, 0.0)
        settle = 2 * PIPELINE_RATE * 2  # the first 2 s are the canceller converging
        for i in range(0, len(far) - step + 1, step):
            chunk = far[i : i + step]
            room.play(chunk, PIPELINE_RATE)
            mic = room.read(CHUNK_SAMPLES)
            assert mic is not None
            for name, echo in cancellers.items():
                t0 = time.process_time()
                out = echo.process(mic, chunk)
                cpu[name] += time.process_time() - t0
                if i >= settle:
                    residual[name] += _energy(out)
                    if name == "gate" and any(out):
                        through += 1
            if i >= settle:
                heard += _energy(mic)
        engines[kind.name] = {
            "erle_db": round(10 * np.log10(heard / max(residual["alone"], 1.0)), 1),
            # Capped at about 125 dB when the gate lets nothing through (an empty residual).
            "erle_with_gate_db": round(10 * np.log10(heard / max(residual["gate"], 1.0)), 1),
            "echo_chunks_through_gate": through,
            "cpu_rtf": round(cpu["alone"] / audio_s, 4),
            "cpu_rtf_with_gate": round(cpu["gate"] / audio_s, 4),
        }
    chosen = engines[SpeexCanceller.name]
    return {
        "engine": ENGINE,
        "room": "delay 60 ms, gain 0.5, sox reverb 50; from 2 s on (convergence excluded)",
        "audio_s": round(audio_s, 1),
        **(chosen if isinstance(chosen, dict) else {}),
        "engines": engines,
    }


def _energy(pcm: bytes) -> float:
    return float(np.sum(np.square(np.frombuffer(pcm, "<i2").astype(np.float64))))


def stop_latency(trials: int = STOP_TRIALS) -> dict[str, Any]:
    """End of the person's "stop" -> the speaker silent, on the audio clock of a file paced in
    real time (so Whisper's time counts), over `trials` read-outs."""
    from appliance.voice.audio.room import SimulatedRoom
    from appliance.voice.commands import VoiceOptions, engines, run_voice, speech_pcm
    from appliance_lab.bench.voice_pipeline import pct

    loaded = engines("whisper")
    latencies: list[float] = []
    decided: list[float] = []
    missed = 0
    for n in range(trials):
        voice = ("espeak", "piper")[n % 2]
        gap = 2.0 + 0.25 * n  # "stop" falls at a different point of the reply each time
        head = bytes(int(0.8 * PIPELINE_RATE) * 2) + speech_pcm("Hey juniper, read my messages.",
                                                                 voice)
        head += bytes(int(gap * PIPELINE_RATE) * 2)
        stop = speech_pcm("Stop.", voice)
        stop_end_s = (len(head) / 2 / PIPELINE_RATE) + voiced(stop)[1] / PIPELINE_RATE
        audio = Pcm(head + stop + bytes(3 * PIPELINE_RATE * 2), PIPELINE_RATE)
        room = SimulatedRoom(audio)
        sink = _ReadingSink(READ_OUT)
        run_voice(room, sink, loaded, room, VoiceOptions(barge_in=True, pace=1.0))
        cut = [t for t in sink.spoken if t.get("cut_short")]
        if not cut:
            missed += 1
            continue
        latencies.append((cut[0]["stopped_at_s"] - stop_end_s) * 1000)
        decided.append((cut[0]["cut_at_s"] - stop_end_s) * 1000)
    return {
        "trials": trials, "missed": missed,
        # The speaker goes silent when the VAD hears speech begin (before "stop" ends: < 0).
        "stop_to_silence_ms": pct(latencies),
        # ... and the rest of the reply is dropped when Whisper's transcript says "stop".
        "stop_to_reply_dropped_ms": pct(decided),
        "measured_on": "audio clock of a file paced at real time, from the last voiced sample "
                       "of 'stop'",
    }


def self_trigger(minutes: float = 2.0) -> dict[str, Any]:
    """One read-out `minutes` long into the room, nobody speaking over it: turns and
    interruptions that came of the appliance's own voice (goal 0)."""
    from appliance.voice.audio.room import SimulatedRoom
    from appliance.voice.commands import VoiceOptions, engines, run_voice, speech_pcm

    loaded = engines("whisper")
    speaker = loaded.speaker
    one_s = speaker.synthesize(READ_OUT, steady=True).seconds
    reply = " ".join([READ_OUT] * max(1, round(minutes * 60 / one_s)))
    audio = Pcm(bytes(int(0.8 * PIPELINE_RATE) * 2)
                + speech_pcm("Hey juniper, read my messages.", "espeak")
                + bytes(2 * PIPELINE_RATE * 2), PIPELINE_RATE)
    room = SimulatedRoom(audio)
    sink = _ReadingSink(reply)
    # Twice real time: Piper keeps ahead of the playback; the echo is the same.
    stats = run_voice(room, sink, loaded, room, VoiceOptions(barge_in=True, pace=2.0))
    over = [h for h in stats.heard if h.get("over_reply")]
    return {
        "own_speech_s": round(sum(t.get("spoken_s", 0.0) for t in sink.spoken), 1),
        "self_interruptions": stats.interruptions,
        "self_pauses": len(over),  # the reply held while the gate let something through
        "self_turns": len(sink.heard) - 1,
        "transcripts_over_reply": [h["text"] for h in over][:20],
    }


def said_over_the_reply(phrase: bytes, reply: bytes, at_s: float, pause_s: float = 0.25) -> bytes:
    """What the recognizer gets of `phrase` said `at_s` into `reply` (b"": nothing played): the
    room's echo, the canceller and its gate, the reply paused `pause_s` after the phrase's first
    sound (the VAD's start), the segment cut as the pipeline cuts it. Unpaced, so the same every
    time, where the pipeline's echo falls where Piper's speed puts it."""
    from appliance.voice.audio.echo import FRAME_SAMPLES, GATE_LOOKAHEAD, open_echo_canceller
    from appliance.voice.audio.room import SimulatedRoom
    from appliance.voice.hearing.stt_whisper import PREROLL_S, TRAILING_SILENCE_S
    from appliance.voice.hearing.vad import VadSettings

    canceller = open_echo_canceller()
    if canceller is None:
        raise RuntimeError("no echo canceller installed (pyaec)")
    step = CHUNK_SAMPLES * 2
    first, last = voiced(phrase)
    onset = first * 2
    lead = int(at_s * PIPELINE_RATE) * 2 - onset
    said = bytes(lead) + phrase + bytes(PIPELINE_RATE * 2)
    said = said[: len(said) - len(said) % step]
    paused = lead + onset + int(pause_s * PIPELINE_RATE) * 2
    played = reply[: paused - paused % step]
    far = (played + bytes(len(said)))[: len(said)]
    room = SimulatedRoom(Pcm(said, PIPELINE_RATE))
    if played:
        room.play(played, PIPELINE_RATE)
    out = b"".join(canceller.process(room.read(CHUNK_SAMPLES) or b"", far[i : i + step])
                   for i in range(0, len(far), step))
    late = GATE_LOOKAHEAD * FRAME_SAMPLES * 2  # what the canceller gives is this late
    start = lead + onset - int(PREROLL_S * PIPELINE_RATE) * 2 + late
    # Heard early, speculate_secs into the silence after it, with Whisper's tail after that.
    end = lead + int((last / PIPELINE_RATE + VadSettings().speculate_secs) * PIPELINE_RATE) * 2
    return out[start : end + late] + bytes(int(TRAILING_SILENCE_S * PIPELINE_RATE) * 2)


def wake_over_reply(positions: int = 12) -> dict[str, Any]:
    """The wake phrase said over a read-out at `positions` points, in each voice: how often it
    wakes as heard now (over a reply Whisper's evidence alone) and as it would with the wake
    spotter asked too, and the spotter's log-odds there and on the phrase said alone."""
    from appliance.voice.commands import engines, speech_pcm
    from appliance.voice.hearing.closed_set import closed_set
    from appliance.voice.hearing.closed_whisper import ClosedWhisperRecognizer, wake_rule

    loaded = engines("whisper")
    assert loaded.whisper is not None
    recognizer = ClosedWhisperRecognizer(loaded.whisper, WAKE_PHRASE,
                                         wake_rule("spotter", WAKE_PHRASE)[1])
    spotter = recognizer.spotter
    sentences = closed_set(tuple(_ReadingSink(READ_OUT).vocabulary()), ())
    reply = speech_pcm(READ_OUT)
    report: dict[str, Any] = {}
    for voice in ("piper", "espeak"):
        phrase = speech_pcm("Hey juniper.", voice)
        heard = with_spotter = 0
        spots: list[float] = []
        for k in range(positions):
            segment = said_over_the_reply(phrase, reply, 2.0 + 0.37 * k)
            heard += recognizer.hear(segment, sentences, over_reply=True).wake
            with_spotter += recognizer.hear(segment, sentences).wake
            if spotter is not None:
                spots.append(spotter.score(segment))
        alone = said_over_the_reply(phrase, b"", 2.0)
        report[voice] = {
            "trials": positions, "woken": heard, "woken_with_the_spotter": with_spotter,
            "spotter_log_odds": [round(x, 2) for x in sorted(spots)],
            "spotter_log_odds_alone": None if spotter is None else round(spotter.score(alone), 2),
        }
    return report


def bench_barge_in() -> dict[str, Any]:
    return {
        "echo": echo_figures(),
        "stop": stop_latency(),
        "self_trigger": self_trigger(),
        "wake_over_reply": wake_over_reply(),
        "goals": {"stop_to_silence_p95_ms": GOAL_STOP_P95_MS, "self_interruptions": 0,
                  "self_turns": 0},
    }
