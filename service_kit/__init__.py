"""What the reward service and the sandbox service share (HTTP settings, hardening, errors, CLI), and nothing
else: the sandbox image carries this package and `sandbox/`, no reward-service code."""
