"""Adapters that plug the reward service into existing trainers: TRL, verl, OpenRLHF, slime.

Each is a few lines for the user; where the service lives comes from the environment
(`REWARD_SERVICE_URL`, comma-separated for several; `REWARD_SERVICE_PROFILE`), or from
arguments where the framework lets the user build the function.
"""
