"""Hearing: the VAD, Whisper and Vosk, the closed set, the wake phrase and barge-in words."""
