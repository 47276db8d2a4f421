"""Every number of the protocol/v1 budget, in one frozen Struct (v1.md "Limits").

The schema-level numbers (string lengths, array lengths) are also baked into the
frame types as ``Meta`` constraints; they come from the same constants here so
the two cannot drift. ``server.hello`` reports an instance of :class:`Limits`.
"""

from __future__ import annotations

import msgspec

FRAME_ID_MAX = 64
CONTEXT_STRING_MAX = 200
CONTEXT_ARRAY_MAX = 8
CONTEXT_NEARBY_MAX = 5
CONTEXT_DEPTH_MAX = 4
CONTEXT_TARGET_BYTES = 2 * 1024
CONTEXT_MAX_BYTES = 6 * 1024
CHAT_TEXT_MAX = 2000
SAVE_NAME_MAX = 64
PROFILE_TEXT_MAX = 200
PROFILE_ITEM_MAX = 60
PROFILE_ITEMS_MAX = 8
OBSERVATION_MAX_BYTES = 16 * 1024
IMAGE_MAX_BYTES = 8 * 1024 * 1024
# base64 of IMAGE_MAX_BYTES, rounded up to a whole quantum.
IMAGE_MAX_B64_CHARS = 4 * ((IMAGE_MAX_BYTES + 2) // 3)
# A chat.send frame with the largest screenshot, its text and a full context.
FRAME_MAX_BYTES = IMAGE_MAX_B64_CHARS + 64 * 1024
# Every other frame type is small (v1.md "Frame size limits").
SMALL_FRAME_MAX_BYTES = 16 * 1024
# The configurable numbers' defaults: the ``[server]`` and ``[images]`` settings
# of the same meaning take these as theirs (the core cannot import the config).
CONTEXT_STALE_AFTER_MS = 5_000
CONTEXT_DROP_AFTER_MS = 30_000
IMAGE_MAX_SIDE_PX = 1568
CHAT_PER_MINUTE = 20
CHAT_BURST = 5
FRAMES_PER_SECOND = 50
FRAME_BURST = 100
HEARTBEAT_MISSES = 3
# Push-to-talk (v1.md "Voice"): 16 kHz mono 16-bit PCM; one voice.audio frame holds at
# most 12000 bytes (375 ms) so that it stays a small frame; an utterance at most 30 s.
VOICE_SAMPLE_RATE = 16_000
VOICE_AUDIO_MAX_BYTES = 12_000
VOICE_AUDIO_MAX_B64_CHARS = 4 * ((VOICE_AUDIO_MAX_BYTES + 2) // 3)
VOICE_UTTERANCE_SECONDS = 30


class Limits(msgspec.Struct, frozen=True, rename="camel"):
    """The budget a mod must respect; sent in ``server.hello.limits``.

    The one copy of the configured limits: the session enforces exactly these
    numbers (its rate buckets, heartbeat deadline and modelContext freshness
    read them from here), so what a mod is told is what it gets. A rate is a
    whole number on the wire when it is one (``20``), else a fraction (``0.5``).
    """

    frame_id_max_chars: int = FRAME_ID_MAX
    frame_max_bytes: int = FRAME_MAX_BYTES
    small_frame_max_bytes: int = SMALL_FRAME_MAX_BYTES
    chat_text_max_chars: int = CHAT_TEXT_MAX
    context_target_bytes: int = CONTEXT_TARGET_BYTES
    context_max_bytes: int = CONTEXT_MAX_BYTES
    context_max_depth: int = CONTEXT_DEPTH_MAX
    context_max_array_items: int = CONTEXT_ARRAY_MAX
    context_max_nearby: int = CONTEXT_NEARBY_MAX
    context_max_string_chars: int = CONTEXT_STRING_MAX
    context_stale_after_ms: int = CONTEXT_STALE_AFTER_MS
    context_drop_after_ms: int = CONTEXT_DROP_AFTER_MS
    observation_max_bytes: int = OBSERVATION_MAX_BYTES
    image_max_bytes: int = IMAGE_MAX_BYTES
    image_max_side_px: int = IMAGE_MAX_SIDE_PX
    chat_per_minute: int | float = CHAT_PER_MINUTE
    chat_burst: int = CHAT_BURST
    frames_per_second: int | float = FRAMES_PER_SECOND
    frame_burst: int = FRAME_BURST
    heartbeat_misses: int = HEARTBEAT_MISSES
    voice_sample_rate: int = VOICE_SAMPLE_RATE
    voice_audio_max_bytes: int = VOICE_AUDIO_MAX_BYTES
    voice_utterance_max_seconds: int | float = VOICE_UTTERANCE_SECONDS
