"""Helpers shared by stages: text processing, model loading, offline setup. Not stages themselves."""
