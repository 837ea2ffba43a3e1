"""deepspeed.launcher stand-in: runner.py is the deepspeed command."""
