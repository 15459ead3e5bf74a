"""cases_matrix.py - make test-matrix: one QEMU case per row of
matrix_rows.py (machines, CPUs, core counts, memory sizes, firmwares,
displays, no serial port), each booted and checked by matrix_checks.py.
The harness leaves these out unless LLMK_MATRIX_TESTS is set."""
from matrix_checks import run_row
from matrix_rows import ROWS


def make_case(row):
    def case(ctx):
        print(f"  {row.name}: {run_row(ctx, row)}", flush=True)
    case.__name__ = "test_matrix_" + row.name.replace("-", "_")
    return case


CASES = [make_case(row) for row in ROWS]
