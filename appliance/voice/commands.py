"""What the CLI calls: run, listen, models, bench voice, demo audio. No typer here."""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from appliance.settings import WakeCheckName
from appliance.voice.audio.clock import AudioClock, Wakeup
from appliance.voice.audio.echo import ENGINE as ECHO_ENGINE
from appliance.voice.audio.echo import EchoCanceller, open_echo_canceller
from appliance.voice.audio.pcm import PIPELINE_RATE, Pcm, load_wav, resample_pcm16, write_wav
from appliance.voice.audio.playback import Playback
from appliance.voice.audio.sources import AudioSource, MicSource, ResilientSource, WavSource
from appliance.voice.audio.speakers import WavRecorder, open_speaker
from appliance.voice.engines import Engines, choose_engine, load_engines
from appliance.voice.errors import VoiceError
from appliance.voice.hearing.vad import VadSettings
from appliance.voice.hearing.wake import WINDOW_S, WakeGate
from appliance.voice.pipeline.feeder import Feeder
from appliance.voice.pipeline.gate import GateProcessor
from appliance.voice.pipeline.run import VoiceStats, run_pipeline
from appliance.voice.pipeline.speech_output import SpeechOutput, SpeechSink
from appliance.voice.pipeline.turns import TurnProcessor
from appliance.voice.pipeline.vad_step import TrackedVADProcessor
from appliance.voice.sink import EnrolAction, EnrolState, Reply, TurnSink, Utterance

if TYPE_CHECKING:
    from appliance.voice.hearing.profile import VoiceProfile


@runtime_checkable
class SpeakingSTT(Protocol):
    """An STT that says things of its own (enrolment's prompts) the way replies are said, and
    can begin enrolment when asked from outside the voice."""

    def set_speaker(self, say: Callable[[str], None]) -> None: ...

    def enrol(self, action: EnrolAction) -> bool: ...

    def enrolment(self) -> EnrolState: ...


@dataclass(frozen=True)
class VoiceControls:
    """What the running pipeline offers the rest of the kiosk, each safe from any thread."""

    say: Callable[[str], None]  # said as a reply is, the microphone muted meanwhile
    # Learning the voice started, paused, skipped on or stopped; False: no profile to enrol into.
    enrol: Callable[[EnrolAction], bool]
    enrolment: Callable[[], EnrolState]  # whether the voice is being learned now


log = logging.getLogger(__name__)

_ENGINES: dict[str, Engines] = {}


def quiet_pipecat() -> None:
    """pipecat logs every frame processor at DEBUG through loguru; keep only its warnings."""
    from loguru import logger

    logger.remove()
    logger.add(sys.stderr, level="WARNING")


def engines(engine: str | None = None, progress: bool = True) -> Engines:
    """Models are loaded once per process (the demo and the bench run several pipelines)."""
    key = engine or choose_engine()[0]
    if key not in _ENGINES:
        quiet_pipecat()
        _ENGINES[key] = load_engines(key, progress=progress)
    return _ENGINES[key]


@dataclass
class VoiceOptions:
    wake_phrase: str = "hey juniper"
    window_s: float = WINDOW_S
    vad: VadSettings = field(default_factory=VadSettings)
    mute_while_speaking: bool = True
    # "stop", "cancel", "no" or the wake phrase cut a reply short, heard through an echo
    # canceller (voice/audio/echo.py); without one installed, the mute above still applies.
    barge_in: bool = False
    # Constrain Vosk to the screen's words and the grammar's (dictation then needs the full
    # vocabulary, so it is off by default).
    vosk_grammar: bool = False
    # Whisper: "closed" hears the screen's sentences first and decides the wake phrase without
    # the screen (voice/hearing/closed_whisper.py); "open" is Whisper with the screen prompt.
    recognizer: Literal["open", "closed"] = "closed"
    # The closed path's second opinion on the wake phrase (closed_whisper.WAKE_CHECKS).
    wake_check: WakeCheckName = "spotter"
    pace: float | None = None  # a file: None = as fast as the VAD reads it, 1.0 = real time
    # The person's own takes (voice/hearing/profile.py), heard before Whisper; None: none.
    profile: Path | None = None
    # A yes to "did you mean ..." teaches the profile how the person said it.
    learn_voice: bool = True
    # How long a silence ends speech; None: as the profile measured the person's pauses.
    end_of_speech_s: float | None = None
    # Told the phrase of each take learned from a yes (the kiosk journals that it was).
    on_learned: Callable[[str], None] | None = None
    # Told of each phrase enrolled at the kiosk: (phrase, "wake" or "command", takes).
    on_enrolled: Callable[[str, str, int], None] | None = None
    # The commands the person says most, asked for first when enrolling at the kiosk.
    frequent: Callable[[], list[str]] | None = None
    # Called for every chunk read: the service watchdog pings only while this loop runs.
    heartbeat: Callable[[], None] | None = None


def describe_recognizer(engine: str, opts: VoiceOptions) -> str:
    """The recognition path in one line, for the start-up log."""
    if engine == "vosk":
        grammar = "runtime grammar of the screen" if opts.vosk_grammar else "full vocabulary"
        return f"Vosk ({grammar}); wake phrase in its transcript"
    if opts.recognizer == "closed":
        return ("closed set: Whisper tiny.en scores the screen's sentences, open Whisper "
                "(fixed prompt) when none fits; wake phrase from the fixed-prompt pass, "
                f"wake check {opts.wake_check}")
    return "open: Whisper tiny.en with the screen's names in its prompt"


def run_voice(
    source: AudioSource,
    sink: TurnSink,
    loaded: Engines,
    speaker: SpeechSink | None = None,
    options: VoiceOptions | None = None,
    on_event: Callable[[Reply], None] | None = None,
    on_controls: Callable[[VoiceControls], None] | None = None,
) -> VoiceStats:
    """Run one pipeline until the source ends (a file) or the process is stopped (a mic).

    `on_controls` is handed the pipeline's `VoiceControls` once it runs: speech that comes from
    outside it (the switch), and enrolment begun from there or the caregiver's page."""
    from appliance.voice.audio.tts import PiperTTSService
    from appliance.voice.hearing.profile import VoiceProfile

    opts = options or VoiceOptions()
    profile = VoiceProfile(opts.profile) if opts.profile is not None else None
    asked = opts
    opts = replace(opts, vad=replace(opts.vad, stop_secs=end_of_speech(asked, profile)))
    clock, wakeup = AudioClock(), Wakeup()

    replying: Callable[[], bool] = lambda: False  # noqa: E731 (set once the output exists)

    def answers_around(words: list[str]) -> list[str]:
        # Over a reply, "stop" is the likely command (appliance/voice/hearing/barge_in.py); the wake
        # phrase and a command may come too.
        stops = ["Stop", "Cancel"] if replying() else []
        return [*stops, *words, "yes", "no"]

    def vocabulary() -> list[str]:
        return answers_around(sink.vocabulary())

    stt: Any
    if loaded.engine == "vosk":
        from appliance.voice.hearing.stt_vosk import VoskSTTService

        grammar = (lambda: [opts.wake_phrase, *vocabulary()]) if opts.vosk_grammar else None
        stt = VoskSTTService(loaded.vosk_model, vocabulary=grammar, wake_phrase=opts.wake_phrase)
    elif opts.recognizer == "closed":
        from appliance.voice.hearing.closed_whisper import ClosedWhisperRecognizer, wake_rule
        from appliance.voice.hearing.personal import PersonalOptions
        from appliance.voice.hearing.stt_closed import ClosedSetSTTService, screen_reader

        assert loaded.whisper is not None
        # The start-up log names the rule used: `spotter` is `command` for a phrase with none.
        used, rule = wake_rule(opts.wake_check, opts.wake_phrase)
        opts = replace(opts, wake_check=used)
        recognizer = ClosedWhisperRecognizer(loaded.whisper, opts.wake_phrase, rule)
        names, words_of = screen_reader(sink)
        # `replying` and the gate are looked up when called: they are made after the STT.
        stt = ClosedSetSTTService(recognizer, names, lambda read: answers_around(words_of(read)),
                                  replying=lambda: replying(),
                                  awaiting_answer=lambda: gate.awaiting_answer(),
                                  profile=profile,
                                  person=PersonalOptions(
                                      opts.learn_voice, opts.on_learned, opts.on_enrolled,
                                      lambda: end_of_speech(asked, profile), opts.frequent))
    else:
        from appliance.voice.hearing.stt_whisper import WhisperSTTService

        assert loaded.whisper is not None
        stt = WhisperSTTService(loaded.whisper, vocabulary, opts.wake_phrase)
    log.info("voice: %s", describe_recognizer(loaded.engine, opts))
    vad = TrackedVADProcessor(opts.vad, clock, wakeup.notify,
                              answers=getattr(stt, "answers_pauses", False))
    gate = GateProcessor(
        WakeGate(opts.wake_phrase, window_s=opts.window_s), opts.vad, clock,
        getattr(sink, "talk", None),  # push-to-talk, when the sink has a switch
    )
    stt_replied = getattr(stt, "replied", None)  # the closed path learns from what acted

    def replied(reply: Reply) -> None:
        if callable(stt_replied):
            stt_replied(reply)
        if on_event is not None:
            on_event(reply)

    turns = TurnProcessor(sink, clock, replied)
    echo, playback = _barge_in(opts, speaker, source.live)
    output = SpeechOutput(sink, speaker, clock, wakeup.notify, opts.mute_while_speaking, playback)
    if playback is not None:
        def replying() -> bool:
            return output.replying

        gate.set_replying(replying)
    processors = [vad, stt, gate, turns, PiperTTSService(loaded.speaker), output]
    feeder = Feeder(source, clock, wakeup, vad, output, opts.pace, opts.heartbeat, playback, echo)
    faults = 0
    if isinstance(source, ResilientSource):

        def fault(message: str) -> None:
            nonlocal faults
            faults += 1
            report = getattr(sink, "fault", None)  # optional: journal the fault
            if callable(report):
                report(message)

        source.on_fault = fault
    source.open()
    try:
        asyncio.run(_run_speaking(feeder, processors, source.live, loaded, turns, on_controls))
    finally:
        if isinstance(source, ResilientSource):
            source.stop()  # a retry loop must not keep the process from exiting
        source.close()
        if playback is not None:
            playback.close()
        if echo is not None:
            echo.close()
    return VoiceStats(
        segments=vad.segments, ignored=gate.ignored, wake_only=gate.wake_only,
        muted_chunks=feeder.muted_chunks, faults=faults, heard=gate.heard,
        interruptions=output.interruptions,
    )


def end_of_speech(opts: VoiceOptions, profile: VoiceProfile | None) -> float:
    """The caregiver's wait after speech, else the one the person's takes measured, else the
    VAD's own."""
    if opts.end_of_speech_s:
        return opts.end_of_speech_s
    measured = profile.end_of_speech_s() if profile is not None else None
    return max(opts.vad.stop_secs, measured or 0.0)


def _barge_in(
    opts: VoiceOptions, speaker: SpeechSink | None, live: bool
) -> tuple[EchoCanceller | None, Playback | None]:
    """The echo canceller and the stoppable playback barge-in needs, or (None, None)."""
    if not opts.barge_in:
        return None, None
    echo = open_echo_canceller()
    if echo is None:
        return None, None
    log.info("barge-in: on, echo canceller %s", ECHO_ENGINE)
    return echo, Playback(speaker, live=live)


async def _run_speaking(
    feeder: Feeder,
    processors: list[Any],
    live: bool,
    loaded: Engines,
    turns: TurnProcessor,
    on_controls: Callable[[VoiceControls], None] | None,
) -> None:
    loop = asyncio.get_running_loop()

    def say(text: str) -> None:
        asyncio.run_coroutine_threadsafe(turns.announce(text), loop)

    speaking = [p for p in processors if isinstance(p, SpeakingSTT)]
    for processor in speaking:  # the STT says enrolment's prompts
        processor.set_speaker(say)
    if on_controls is not None:
        on_controls(VoiceControls(
            say, lambda action: any(p.enrol(action) for p in speaking),
            lambda: next((s for p in speaking if (s := p.enrolment()) != "off"), "off")))
    await run_pipeline(feeder, processors, live, loaded.speaker.rate)


def open_audio(path: Path | None) -> AudioSource:
    """A WAV file's source, or the microphone's; a bad file or no microphone fails here, in one
    line (VoiceError), before any model loads."""
    if path is not None:
        return WavSource(path)
    mic = MicSource()
    mic.open()  # no device: VoiceError("No microphone found.")
    mic.close()
    return ResilientSource(mic)


def run_audio(
    path: Path | None,
    sink: TurnSink,
    speak_to: Path | None,
    wake_phrase: str = "hey juniper",
    on_event: Callable[[Reply], None] | None = None,
    on_controls: Callable[[VoiceControls], None] | None = None,
    source: AudioSource | None = None,
    heartbeat: Callable[[], None] | None = None,
    barge_in: bool = False,
    wake_check: WakeCheckName = "spotter",
    profile: Path | None = None,
    learn_voice: bool = True,
    end_of_speech_s: float | None = None,
    on_learned: Callable[[str], None] | None = None,
    on_enrolled: Callable[[str, str, int], None] | None = None,
    frequent: Callable[[], list[str]] | None = None,
) -> VoiceStats:
    """`appliance run`: a WAV file (ends with the file) or the microphone (runs until stopped).

    `source`: one already made by `open_audio(path)`; `profile`: the person's voice profile."""
    source = source or open_audio(path)
    loaded = engines()
    recorder = WavRecorder(speak_to) if speak_to is not None else None
    speaker: SpeechSink | None = recorder
    if recorder is None and path is None:
        speaker = open_speaker()
    try:
        return run_voice(
            source, sink, loaded, speaker,
            VoiceOptions(wake_phrase=wake_phrase, heartbeat=heartbeat, barge_in=barge_in,
                         wake_check=wake_check, profile=profile, learn_voice=learn_voice,
                         end_of_speech_s=end_of_speech_s, on_learned=on_learned,
                         on_enrolled=on_enrolled, frequent=frequent),
            on_event,
            on_controls,
        )
    finally:
        if recorder is not None:
            recorder.save()


class _ListenSink:
    """Hears commands and does nothing with them (for `appliance listen`)."""

    def __init__(self) -> None:
        self.count = 0

    def vocabulary(self) -> list[str]:
        return []  # no screen: the prompt is only the shape of a command (see bias_prompt)

    def handle(self, utterance: Utterance) -> Reply:
        self.count += 1
        return Reply(f"listen-{self.count}", "", False)

    def spoke(self, turn_id: str, text: str, timings: dict[str, float]) -> None:
        pass


def listen(path: Path) -> list[dict[str, Any]]:
    """Every speech segment in the file: transcript, engine, confidence, wake decision, timings."""
    source = WavSource(path)
    stats = run_voice(source, _ListenSink(), engines())
    return stats.heard


def models_status() -> list[dict[str, Any]]:
    from appliance.voice import models

    return models.status()


def models_install(name: str) -> None:
    from appliance.voice import models

    models.install(name)


def models_verify() -> list[dict[str, Any]]:
    from appliance.voice import models

    return models.verify()


def _as_sentence(line: str) -> str:
    """Piper reads "hey juniper, undo that" with a rising, clipped tune that Whisper hears as
    "I knew that"; as a sentence ("Hey juniper, undo that.") it sounds like a person."""
    line = line.strip()
    if line and line[-1] not in ".?!":
        line += "."
    return line[:1].upper() + line[1:]


def synthesize_demo_audio(lines: list[str], out: Path, gap_s: float = 1.2) -> Path:
    """Speak `lines` with Piper into one WAV, with `gap_s` of silence around each."""
    if not lines:
        raise VoiceError("Nothing to synthesize.")
    speaker = engines().speaker
    gap = bytes(int(gap_s * speaker.rate) * 2)
    pcm = bytearray(gap)
    for line in lines:
        pcm += speaker.synthesize(_as_sentence(line), steady=True).data + gap
    write_wav(out, Pcm(bytes(pcm), speaker.rate))
    return out


def speech_pcm(text: str, voice: str = "piper") -> bytes:
    """16 kHz test/bench speech from Piper or espeak-ng (a second, very different voice)."""
    if voice == "piper":
        spoken = engines().speaker.synthesize(text, steady=True)
        return resample_pcm16(spoken.data, spoken.rate, PIPELINE_RATE)
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        wav = Path(tmp) / "s.wav"
        subprocess.run(["espeak-ng", "-s", "150", "-w", str(wav), text], check=True,
                       capture_output=True)
        return load_wav(wav).data
