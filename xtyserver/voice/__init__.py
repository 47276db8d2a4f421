"""Voice: the PC's microphone, local speech recognition and spoken replies (docs/voice.md).

A shell beside ``serve/``: it records, transcribes and speaks what the session's
effects say (:mod:`xtyserver.session.voice` decides). Every speech library
(sounddevice, faster-whisper, numpy, comtypes) is imported inside functions on
first use, so a server with voice off never loads one (``xtyserver[voice]`` is
an optional extra).
"""
