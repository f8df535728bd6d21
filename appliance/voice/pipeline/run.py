"""The pipecat pipeline: source -> webrtcvad -> STT -> wake gate -> turn -> Piper -> speaker/WAV.

Each step owns its state and tells the others through frames (appliance/voice/pipeline/frames.py).
The feeder pushes microphone-side audio into a PipelineWorker run by a WorkerRunner. A file is
fed as fast as the VAD consumes it, but like a polite user it waits while the appliance is
still working on (or answering) what it just heard; a live microphone keeps running and is
muted while the appliance speaks, so the appliance never hears itself. With barge-in, the reply
plays 20 ms per microphone chunk (appliance/voice/audio/playback.py) and the microphone stays open
through an echo canceller whose reference is that reply, so "stop" can cut it short.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from pipecat.frames.frames import Frame
from pipecat.pipeline.pipeline import Pipeline
from pipecat.pipeline.worker import PipelineParams, PipelineWorker
from pipecat.processors.frame_processor import FrameProcessor
from pipecat.workers.runner import WorkerRunner

from appliance.voice.audio.pcm import PIPELINE_RATE
from appliance.voice.pipeline.feeder import Feeder


@dataclass
class VoiceStats:
    """Counters for a run: what was heard, ignored, muted, and where time went."""

    segments: int = 0
    ignored: int = 0
    wake_only: int = 0
    muted_chunks: int = 0
    faults: int = 0
    interruptions: int = 0  # replies cut short by barge-in
    heard: list[dict[str, Any]] = field(default_factory=list)


async def run_pipeline(
    feeder: Feeder, processors: list[FrameProcessor], live: bool, out_rate: int
) -> None:
    """Run [VAD, STT, gate, turn, TTS, output] on a PipelineWorker under a WorkerRunner."""
    pipeline = Pipeline(processors)
    worker = PipelineWorker(
        pipeline,
        params=PipelineParams(audio_in_sample_rate=PIPELINE_RATE, audio_out_sample_rate=out_rate),
        idle_timeout_secs=None,
        cancel_on_idle_timeout=False,
        enable_rtvi=False,
        enable_turn_tracking=False,
        check_dangling_tasks=False,
    )
    started = asyncio.Event()

    async def _on_started(_worker: Any, _frame: Frame) -> None:
        started.set()

    worker.add_event_handler("on_pipeline_started", _on_started)

    runner = WorkerRunner(handle_sigint=live, check_dangling_tasks=False)
    await runner.add_workers(worker)
    feeding = asyncio.create_task(feeder.run(worker, started))
    try:
        await runner.run()
    finally:
        if not feeding.done():
            feeding.cancel()
    if feeding.done() and not feeding.cancelled() and feeding.exception() is not None:
        raise feeding.exception()  # type: ignore[misc]
