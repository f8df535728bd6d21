"""The pipecat pipeline: VAD -> STT -> wake gate -> turn -> speech output, through frames."""
