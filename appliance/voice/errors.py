"""The one exception the voice layer raises for things a user can cause or fix."""


class VoiceError(Exception):
    """A short, speakable message: bad audio file, no microphone, missing model."""


class BadTake(VoiceError):
    """A take that cannot be learned from, said in words ("let's try that once more")."""
