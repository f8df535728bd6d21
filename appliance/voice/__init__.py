"""The voice layer: audio in (mic or WAV), webrtcvad, wake phrase, Vosk or Whisper, Piper out.

It knows nothing of planning or the journal: it hands `Utterance`s to a `TurnSink` and speaks
the `Reply`. Entry points for the CLI are in `appliance.voice.commands`.
"""

from loguru import logger as _pipecat_log

# pipecat logs through loguru at DEBUG (a banner on import, every frame processor's start);
# before pipecat is first imported, keep only its warnings and errors.
_pipecat_log.remove()
_pipecat_log.add(__import__("sys").stderr, level="WARNING")
