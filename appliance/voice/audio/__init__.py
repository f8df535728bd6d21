"""Audio in and out: PCM and WAV, sources, the echo canceller, playback, Piper, speakers."""
