"""metis's tests, one folder per layer of the runtime (docs/architecture.md "Tests").

A package, so modules are named by their path (`tests.store.test_store`): two layers may
hold files of one name, and shared code is imported as `tests.support.<module>`.
"""
