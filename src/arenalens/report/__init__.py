"""Renderers: frozen report data → text, images and HTML (strings or bytes; no I/O here)."""
