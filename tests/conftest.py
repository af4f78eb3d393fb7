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


import shutil  # noqa: E402
import sys  # noqa: E402

import pytest  # noqa: E402


@pytest.fixture(scope="session")
def spark():
    """One local Spark session (``local[2]``) shared by every Spark test
    module: starting the JVM is the largest cost of these tests. Skipped
    only when no Java runtime is installed (PySpark is in the test extra)."""
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("Spark needs a Java runtime (Java 17 or newer), and none is installed")
    # The executors' Python workers run this interpreter (and its outprob).
    os.environ["PYSPARK_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession

    session = (
        SparkSession.builder.master("local[2]").appName("outprob-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.memory", "1g")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
