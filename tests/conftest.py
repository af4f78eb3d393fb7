"""Hypothesis profiles: ``dev`` (default, quick), ``ci`` (the README's test
command), ``thorough`` (long fuzzing runs). Select with HYPOTHESIS_PROFILE."""

import os

from hypothesis import settings

# Examples hold arrays of up to thousands of scores and run iterative
# reference estimators; their duration is not a property under test.
settings.register_profile("dev", max_examples=40, deadline=None)
# CI is derandomized so that a run on main is reproducible; the random search
# for new counterexamples is the job of the dev and thorough profiles.
settings.register_profile(
    "ci", max_examples=150, deadline=None, derandomize=True, database=None
)
# thorough: at least 10^4 examples per property (issue #10); a run is recorded
# in tests/THOROUGH.md.
settings.register_profile("thorough", max_examples=10_000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))
