"""Start-up machinery with no PTX knowledge: ``@record`` (cheap frozen dataclasses), the Lark runtime
and its parser cache, data and cache directories, the garbage-collector pause."""
