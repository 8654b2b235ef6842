"""The cat model language: parser (grammar/cat.lark), relation algebra and interpreter."""
