"""Why an outcome or a finding happens, in the model's names and the source's lines: the witness
execution, the axioms it satisfies or breaks (``evaluate``), the minimal fixes (``fix``), the target
outcome (``targets``) and the drawing of an execution (``graph``)."""
