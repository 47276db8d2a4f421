"""The model shell: an OpenAI-compatible streaming client and a scripted stand-in server."""
