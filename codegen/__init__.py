"""metis code generator: JSON Schema (schema/vN) -> versioned Pydantic models (generated/).

Run `python -m codegen` to regenerate and `python -m codegen --check` to verify that
generated/ matches the schema byte for byte. Nothing under generated/ is edited by hand.
"""
