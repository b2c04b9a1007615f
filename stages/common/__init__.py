"""Helpers shared by stages (text, models, offline setup, progress); not stages themselves."""
