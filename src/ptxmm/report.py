"""Human-readable reports of check results (rich)."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from .result import CheckResult


def verdict_text(r: CheckResult) -> Text:
    cond = r.program.condition
    if cond is None:
        return Text("no condition", style="dim")
    if r.holds is None:
        return Text(f"Unknown  {r.status_text or 'not decided'}", style="bold yellow")
    n_sat = sum(1 for o in r.outcomes if o.satisfies)
    total = len(r.outcomes)
    q = cond.quantifier
    if q == "exists":
        word = "ALLOWED" if r.holds else "FORBIDDEN"
        why = f"{n_sat} of {total} allowed outcomes satisfy the condition"
    elif q == "~exists":
        word = "holds (never happens)" if r.holds else "fails (can happen)"
        why = f"{n_sat} of {total} allowed outcomes satisfy the condition"
    else:
        word = "REQUIRED (always)" if r.holds else "not required"
        why = f"{n_sat} of {total} allowed outcomes satisfy the condition"
    t = Text()
    t.append("Ok" if r.holds else "No", style="bold green" if r.holds else "bold red")
    t.append(f"  {word}", style="bold")
    t.append(f" — {why}")
    return t


def render(r: CheckResult, console: Console) -> None:
    p = r.program
    head = Text()
    head.append(p.name, style="bold cyan")
    head.append(f"  ({p.file})", style="dim")
    if p.description:
        head.append(f"  {p.description}")
    console.print(head)
    console.print(f"model [bold]{r.model}[/bold]   engine {r.engine}   events {r.n_events}   "
                  f"time {r.time_s * 1000:.1f} ms")
    if p.condition is not None:
        console.print(f"condition  {p.condition.quantifier} {p.condition.text.split(' ', 1)[-1]}"
                      if p.condition.text else "condition")
    table = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
    table.add_column("#", justify="right", style="dim")
    for k in r.observables:
        table.add_column(k, justify="right")
    if p.condition is not None:
        table.add_column("cond", justify="center")
    table.add_column("flags", style="yellow")
    for i, o in enumerate(r.outcomes, 1):
        vals = o.outcome.as_dict()
        row = [str(i)] + [str(vals[k]) for k in r.observables]
        if p.condition is not None:
            row.append("[green]✓[/green]" if o.satisfies else "·")
        row.append(", ".join(o.flags))
        table.add_row(*row)
    console.print(table)
    pairs: dict[str, list[str]] = {}
    for i, races in enumerate(r.races(), 1):
        for x in races:
            pairs.setdefault(f"{x.flag}: {x.a}  ~  {x.b}", []).append(str(i))
    for text, nums in pairs.items():
        console.print(Text(f"  {text}   (outcome {', '.join(nums)})", style="yellow"))
    console.print(f"{len(r.outcomes)} allowed outcome(s)")
    console.print(verdict_text(r))
    if not r.outcomes and r.status == "ok":
        console.print(Text("the model allows no execution (for instance, every one deadlocks at a "
                           "barrier); the condition is judged over none, as herd7 and Dat3M do",
                           style="yellow"))
    if r.status_text and p.condition is None:
        console.print(Text(r.status_text, style="yellow"))
    if r.cut_paths:
        console.print(f"[yellow]bound: --unroll {r.unroll} cut {r.cut_paths} execution path(s); "
                      "outcomes of longer executions are not shown[/yellow]")
    if r.awaits:
        console.print(f"[dim]{r.awaits} side-effect-free spin loop(s) reduced to await reads[/dim]")
    if r.expected is not None:
        ok = r.agrees
        mark = ("[yellow]? not decided[/yellow]" if ok is None else
                "[green]✓ agrees[/green]" if ok else "[red]✗ DISAGREES[/red]")
        console.print(f"expected: condition {'holds' if r.expected else 'fails'}   {mark}")
