"""The item that grades an exercise inside nbval's run fails whenever a check would let a learner
down: a wrong answer passed, a failure that does not say what differs, a solution that does not
pass, a check that does not say "not attempted yet" as shipped. Driven here by a stand-in kernel
(no notebook is executed), so each way of failing is shown in milliseconds."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from tests.support.exercise_grading import ExerciseGrading

WRONG, SOLUTION, CHECK = "answer = 1", "answer = 42", "grade('answer', check_answer)"


class StandInKernel:
    """Answers execute requests as a kernel does (a shell reply, iopub output, then idle), the
    check cell behaving as ``check`` says for the answer the kernel holds."""

    def __init__(self, check) -> None:
        self.check = check
        self.answer = None
        self.messages: dict[str, list[dict]] = {"shell": [], "iopub": []}
        self.count = 0

    def execute_cell_input(self, source: str, allow_stdin=None) -> str:
        self.count += 1
        msg_id = f"msg-{self.count}"
        text, error = "", None
        if source == CHECK:
            text, error = self.check(self.answer)
        else:
            self.answer = int(source.split("=")[1])
        parent = {"msg_id": msg_id}
        reply = {"status": "error", "ename": error[0], "evalue": error[1]} if error else {"status": "ok"}
        self.messages["shell"] += [{"parent_header": {"msg_id": "someone-else"}, "content": {"status": "ok"}},
                                   {"parent_header": parent, "content": reply}]
        if text:
            self.messages["iopub"].append({"parent_header": parent, "msg_type": "stream",
                                           "content": {"name": "stdout", "text": text}})
        self.messages["iopub"].append({"parent_header": parent, "msg_type": "status",
                                       "content": {"execution_state": "idle"}})
        return msg_id

    def get_message(self, stream: str, timeout=None) -> dict:
        return self.messages[stream].pop(0)


def good_check(answer):
    if answer == 42:
        return "✓ answer: right\n", None
    return "", ("CheckFailed", f"answer: yours is {answer}, the data says 42")


def grade(check=good_check, shipped="answer: not attempted yet", wrong_code=WRONG, message="the data says 42"):
    notebook = SimpleNamespace(kernel=StandInKernel(check), path=SimpleNamespace(name="NN_demo.ipynb"),
                               config=SimpleNamespace(option=SimpleNamespace(nbval_cell_timeout=5)))
    item = SimpleNamespace(
        parent=notebook, heading="Exercise 1 · Demo", check_source=CHECK, wrong_code=wrong_code,
        wrong_message=message, solution=SOLUTION,
        check_item=SimpleNamespace(test_outputs=[{"output_type": "stream", "name": "stdout", "text": shipped}]))
    ExerciseGrading.runtest(item)  # the item's own code, on a stand-in for pytest's node


def test_a_check_that_grades_all_three_ways_passes():
    grade()


@pytest.mark.parametrize(("case", "expected"), [
    ({"check": lambda answer: ("✓ answer: right\n", None)}, "passed a wrong answer"),
    ({"message": "is not the total"}, "lacks 'is not the total'"),
    ({"check": lambda answer: ("", ("KeyError", "'answer'"))}, "KeyError"),
    ({"check": lambda answer: ("", ("CheckFailed", "the data says 42"))}, "the solution did not pass"),
    ({"shipped": "✓ answer: right"}, "no 'not attempted yet' message"),
    ({"wrong_code": None}, "no wrong answer listed"),
])
def test_every_way_a_check_can_fail_the_learner_fails_the_item(case, expected):
    with pytest.raises(AssertionError, match=expected):
        grade(**case)
