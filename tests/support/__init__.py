"""What the tests share: the one message builder (`messages`), the one golden harness
(`golden`), where the data folders are (`paths`), each provider's SDK contract
(`contracts`), and the support of each layer (`store_support`, `client_support`, ...)."""
