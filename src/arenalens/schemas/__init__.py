"""JSON Schemas of the documents arenalens writes (shipped as package data)."""
