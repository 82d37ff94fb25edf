"""metis benchmarks: `nox -s bench` (or `python -m bench`). Not timed tests: each row is a
measurement reported beside a floor measured in the same run on the same data."""
