"""Per-provider contract modules: each `tests/contracts/<provider>.py` exports
`check_request(body)` (official SDK request types, iterables walked), `response_fixture()`,
`stream_fixture()` and `error_fixture()`, shared by the adapter tests, the parametrized
contract suite (tests/test_adapter_contract.py), the client tests and the benchmarks."""
