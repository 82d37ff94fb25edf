"""Per-provider contract modules: each `tests/support/contracts/<provider>.py` exports
`check_request(body)` (official SDK request types, iterables walked), `response_fixture()`,
`stream_fixture()` and `error_fixture()`, shared by the adapter tests, the parametrized
contract suite (tests/adapters/test_adapter_contract.py), the client tests and the benchmarks."""
