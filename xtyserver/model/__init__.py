"""The model shell: an OpenAI-compatible streaming client and the prompt it sends."""
