"""The relevance floor: which words may decide that a memory is about the prompt."""

from __future__ import annotations

from daemon.memory import relevance
from daemon.memory.context import build_context
from daemon.memory.index import SearchIndex
from daemon.memory.roots import MemoryRoot
from tests.memory.conftest import NOW, write_memory


def shown(index: SearchIndex, roots: list[MemoryRoot], prompt: str) -> tuple[str, ...]:
    return build_context(index, roots, NOW, prompt=prompt).relevant_ids


def test_words_of_every_bug_report_never_decide(index: SearchIndex, project_root: MemoryRoot, global_root: MemoryRoot) -> None:
    write_memory(project_root.path, "gotcha/probe.md", "title: Rollout fails when the probe errors\nkind: gotcha\nid: probe",
                 "The rollout failed: the readiness probe returned an error and the fix was a startupProbe.")  # fmt: skip
    write_memory(project_root.path, "gotcha/zh.md", "title: 就绪探针超时导致滚动发布失败\nkind: gotcha\nid: zh", "改成 startupProbe。")
    roots = [project_root, global_root]
    index.sync_root(project_root)
    assert shown(index, roots, "it fails with an error, can you fix it?") == ()
    assert shown(index, roots, "测试失败了，帮我看看") == ()
    # the same story told in Chinese counts too (readiness 就绪, probe 探针, rollout 滚动发布)
    assert set(shown(index, roots, "the readiness probe fails during the rollout")) == {"probe", "zh"}
    assert all(relevance.is_stop(t) for t in ("fails", "error", "broken", "失败", "실패", "修正"))


def test_a_word_many_memories_hold_never_decides(index: SearchIndex, project_root: MemoryRoot, global_root: MemoryRoot) -> None:
    for n in range(30):
        write_memory(project_root.path, f"fact/c{n}.md", f"title: Config note {n}\nkind: fact\nid: c{n}",
                     f"The config and the test of release {n} were updated.")  # fmt: skip
        write_memory(project_root.path, f"fact/o{n}.md", f"title: Other note {n}\nkind: fact\nid: o{n}", "Nothing alike.")
        write_memory(project_root.path, f"fact/p{n}.md", f"title: Plain note {n}\nkind: fact\nid: p{n}", "Nothing alike.")
    write_memory(project_root.path, "lesson/vat.md", "title: VAT config is rounded once\nkind: lesson\nid: vat",
                 "Round the VAT total at the end, in the config of the invoice test.")  # fmt: skip
    roots = [project_root, global_root]
    index.sync_root(project_root)
    # config, test and release: thirty of the memories hold each of them
    assert shown(index, roots, "the config and the test of the release") == ()
    assert shown(index, roots, "where is the VAT config?") == ("vat",)


def test_an_identifier_in_the_body_is_evidence_alone(index: SearchIndex, project_root: MemoryRoot, global_root: MemoryRoot) -> None:
    write_memory(project_root.path, "sessions/s1.md", "title: Typo in the environment file\nkind: session\nid: s1",
                 "Outcome: a typo in the DEPLOY_ENV variable; fixed in .env.production.")  # fmt: skip
    write_memory(project_root.path, "fact/other.md", "title: Nightly jobs\nkind: fact\nid: other", "The variable is set nightly.")
    roots = [project_root, global_root]
    index.sync_root(project_root)
    assert shown(index, roots, "DEPLOY_ENV 好像写错了") == ("s1",)
    assert shown(index, roots, "what is this variable?") == ()  # one word in passing is not


def test_a_long_chatty_prompt_still_finds_its_memory(index: SearchIndex, project_root: MemoryRoot, global_root: MemoryRoot) -> None:
    write_memory(project_root.path, "sessions/af.md", "title: Airflow scheduler stuck after upgrade\nkind: session\nid: af",
                 "Outcome: the metadata database migration had not been run; airflow db migrate fixed it.")  # fmt: skip
    write_memory(project_root.path, "fact/dbt.md", "title: Transformations live in dbt\nkind: decision\nid: dbt", "Airflow triggers dbt.")
    roots = [project_root, global_root]
    index.sync_root(project_root)
    prompt = ("Hi! Hope you're doing well. So, I've spent the whole morning trying to work out why the Airflow "
              "scheduler won't schedule anything after we bumped the version, and honestly I'm out of ideas.")  # fmt: skip
    assert shown(index, roots, prompt) == ("af",)


def test_a_compound_and_its_parts_are_one_piece_of_evidence() -> None:
    units = relevance._units(["deploy_env", "deploy", "env", "variable", "src/app/main.py", "main.py", "main", "py"])
    assert units == [["deploy_env", "deploy", "env"], ["variable"], ["src/app/main.py", "main.py", "main", "py"]]


def test_parts_of_an_identifier_no_memory_holds_count_half() -> None:
    units = relevance._units(["keyerror", "key", "customer_id", "customer"], relevance.word_groups("KeyError: customer_id"))
    assert units == [["keyerror", "key"], ["customer_id", "customer"]]
    prompt = relevance._prompt(["customer_id", "customer", "notebook"], 100, {"customer": 1})
    assert prompt.unheld == {"customer_id"}
    assert relevance._evidence(prompt, " customer ", " ")[1] == 0.5 * prompt.weight["customer"]


def test_a_memory_holding_only_parts_of_identifiers_no_memory_holds_is_not_shown(
    index: SearchIndex, project_root: MemoryRoot, global_root: MemoryRoot
) -> None:
    write_memory(project_root.path, "sessions/dedupe.md", "title: Slow pandas merge in the customer dedupe job\nkind: session\nid: dd",
                 "Outcome: the merge on email strings was replaced by a merge on a hashed key column.")  # fmt: skip
    roots = [project_root, global_root]
    index.sync_root(project_root)
    assert shown(index, roots, "KeyError: 'customer_id' in the notebook") == ()  # key of KeyError, customer of customer_id
    assert shown(index, roots, "the customer dedupe job is slow, KeyError on the hashed key") == ("dd",)


def test_an_identifier_no_memory_holds_is_held_when_a_memory_writes_its_parts_in_a_row(
    index: SearchIndex, project_root: MemoryRoot, global_root: MemoryRoot
) -> None:
    write_memory(project_root.path, "decision/dbt.md", "title: Transformations live in dbt models, not in Airflow Python operators\nkind: decision\nid: dbt",
                 "SQL transformations moved to dbt; Airflow only triggers dbt run.")  # fmt: skip
    write_memory(project_root.path, "fact/apart.md", "title: The operator of the night shift\nkind: fact\nid: apart",
                 "Python scripts are run by the operator on call.")  # fmt: skip
    roots = [project_root, global_root]
    index.sync_root(project_root)
    # PythonOperator: python, operator, each in a row in one memory (in any inflection), apart in the other
    assert shown(index, roots, "new mart aggregation: should I write it as a PythonOperator?") == ("dbt",)
    assert {" python operator ", " python operators "} <= set(relevance.spelled_out(("python", "operator")))
    # an identifier written out is the identifier, whatever its parts are (no list of tools
    # says docker and compose are "broad"); beside a word the memory does not hold, too
    write_memory(project_root.path, "fact/compose.md", "title: Run docker compose with the dev profile\nkind: fact\nid: compose", "Locally.")
    index.sync_root(project_root)
    assert shown(index, roots, "docker-compose: where is the override file?") == ("compose",)
    assert shown(index, roots, "docker: where is the override file?") == ()  # one of its parts is not it


def test_word_forms_are_inflections_with_the_words_stem() -> None:
    from daemon.memory import wordforms

    assert {"deploys", "deployed", "deploying", "deployment"} <= set(wordforms.inflections("deploy"))
    assert "pod" in wordforms.inflections("pods") and "pdf" in wordforms.inflections("pdfs")
    # production is not a form of product, nor builder of build
    assert "product" not in wordforms.inflections("production") and "builder" not in wordforms.inflections("build")
    assert relevance.content_terms("it cannot be sent between threads") == ["send", "threads"]
    assert "ms" in relevance.content_terms("the p95 is 30 ms")  # an abbreviation of the glossary is no stop word


def test_a_prompt_finds_a_memory_in_other_words_and_languages(index: SearchIndex, project_root: MemoryRoot, global_root: MemoryRoot) -> None:
    write_memory(project_root.path, "gotcha/ts.md", "title: Parquet timestamps are nanoseconds\nkind: gotcha\nid: ts",
                 "BigQuery wants microseconds: write with coerce_timestamps.")  # fmt: skip
    write_memory(project_root.path, "lesson/clock.md", "title: テストでは時刻を注入する\nkind: lesson\nid: clock", "CI のタイムゾーンが UTC だった。")
    write_memory(project_root.path, "lesson/mig.md", "title: 마이그레이션은 배포 전에 실행한다\nkind: lesson\nid: mig", "오래된 파드가 새 스키마에서 실패했다.")
    write_memory(project_root.path, "fact/pdf.md", "title: Invoice PDF rendering\nkind: fact\nid: pdf", "Large invoices hit the request timeout.")
    roots = [project_root, global_root]
    index.sync_root(project_root)
    assert shown(index, roots, "casting timestamp[ns] loses data") == ("ts",)  # ns: nanoseconds
    assert shown(index, roots, "don't call time.Now() in tests") == ("clock",)  # time: 時刻
    assert shown(index, roots, "run the migration before the deploy") == ("mig",)  # 마이그레이션, 배포
    assert shown(index, roots, "big invoice PDFs time out") == ("pdf",)  # PDFs, "time out": timeout
    assert shown(index, roots, "how do I center a div?") == ()


def test_a_memory_holding_part_of_what_a_better_one_holds_is_not_shown(
    index: SearchIndex, project_root: MemoryRoot, global_root: MemoryRoot
) -> None:
    write_memory(project_root.path, "sessions/s1.md", "title: Invoice PDF rendering timeout\nkind: session\nid: s1", "Moved to a job.")
    write_memory(project_root.path, "lesson/b.md", "title: Clone invoice totals before await\nkind: lesson\nid: b", "The future was not Send.")
    roots = [project_root, global_root]
    index.sync_root(project_root)
    assert shown(index, roots, "downloading a big invoice as PDF gives a 504") == ("s1",)
    assert shown(index, roots, "the invoice future is not Send") == ("b",)


def test_a_korean_or_katakana_word_is_not_found_inside_a_longer_one(
    index: SearchIndex, project_root: MemoryRoot, global_root: MemoryRoot
) -> None:
    write_memory(project_root.path, "lesson/vm.md", "title: 뷰모델에서는 코루틴을 스코프에서 실행한다\nkind: lesson\nid: vm", "누수를 막는다.")
    write_memory(project_root.path, "gotcha/keep.md", "title: 릴리스 빌드에서 모델 클래스가 제거됨\nkind: gotcha\nid: keep", "규칙을 추가한다.")
    write_memory(project_root.path, "lesson/mig.md", "title: マイグレーションは先に流す\nkind: lesson\nid: mig", "古いポッドが新しいスキーマで落ちた。")
    write_memory(project_root.path, "sessions/rate.md", "title: レート制限のバグ\nkind: session\nid: rate", "カウンタの期限を直した。")
    roots = [project_root, global_root]
    index.sync_root(project_root)
    assert shown(index, roots, "모델에 클래스를 붙여야 하나요") == ("keep",)  # 모델, not the 모델 of 뷰모델
    assert shown(index, roots, "レートリミットのカウンタがリセットされない") == ("rate",)  # レート, not the レー of マイグレーション
    assert shown(index, roots, "古いポッドが新しいスキーマで落ちる") == ("mig",)


def test_a_word_start_is_refused_only_where_it_continues_a_longer_word_of_its_script() -> None:
    start = relevance._WordStart(" 모델 ", "모", relevance._HANGUL)
    assert start.found(" 모델 클래스 ")  # at the stream's start
    assert not start.found(" 뷰모 모델 에서 ")  # the 모델 of 뷰모델
    assert start.found(" 뷰모 모델 에서 모델 클래스 ")  # a later one of its own
    assert start.found(" x모 모델 ")  # after another script: a word of its own
    assert not start.found(" 뷰모 모델링 ")  # not there at all
    katakana = relevance._WordStart(" レー ", "レ", relevance._KATAKANA)
    assert not katakana.found(" グレ レー ーシ ")  # the レー of マイグレーション
    assert katakana.found(" レー ート ")


def test_a_lesser_memory_must_bring_strong_evidence_of_its_own(
    index: SearchIndex, project_root: MemoryRoot, global_root: MemoryRoot
) -> None:
    write_memory(project_root.path, "sessions/drift.md", "title: Terraform plan shows drift on the VPC\nkind: session\nid: drift",
                 "Outcome: someone changed the security group in the console; imported it instead of reverting.")  # fmt: skip
    write_memory(project_root.path, "lesson/lock.md", "title: Terraform state needs a DynamoDB lock\nkind: lesson\nid: lock",
                 "Two people ran apply at once and broke the state file.")  # fmt: skip
    roots = [project_root, global_root]
    index.sync_root(project_root)
    pasted = ("terraform plan wants to change things nobody touched:\n```\n  # aws_security_group.web will be updated in-place\n"
              "Plan: 0 to add, 1 to change, 0 to destroy.\n```\nshould I just apply and revert it?")  # fmt: skip
    # the lesson shares only the note's title word (terraform) and a word in passing (apply)
    assert shown(index, roots, pasted) == ("drift",)
    # two topics named: each memory is strong evidence of its own
    assert set(shown(index, roots, "terraform plan drift, and do we need a DynamoDB state lock?")) == {"drift", "lock"}


def test_a_pasted_trace_confirms_a_memory_but_does_not_pick_one_alone(
    index: SearchIndex, project_root: MemoryRoot, global_root: MemoryRoot
) -> None:
    write_memory(project_root.path, "gotcha/pq.md", "title: Parquet timestamps from pandas are nanoseconds\nkind: gotcha\nid: pq",
                 "Loading pandas-written parquet into BigQuery failed with 'invalid timestamp'. Write with coerce_timestamps='us'.")  # fmt: skip
    write_memory(project_root.path, "fact/etl.md", "title: Nightly jobs\nkind: fact\nid: etl", "The script runs at night.")
    roots = [project_root, global_root]
    index.sync_root(project_root)
    csv = ("this script dies on a big CSV:\n```\nTraceback (most recent call last):\n"
           '  File ".../pandas/io/parsers/readers.py", line 912, in read_csv\n'
           "UnicodeDecodeError: 'utf-8' codec can't decode byte 0xe9: invalid continuation byte\n```\n"
           "the file comes from the finance team's Excel export")  # fmt: skip
    assert shown(index, roots, csv) == ()  # pandas and invalid only in the paste
    load = "loading into BigQuery fails for yesterday's partition:\n```\nBadRequest: 400 Invalid timestamp value in parquet\n```\n"
    assert shown(index, roots, load) == ("pq",)


def test_the_prompts_own_words_are_the_lines_outside_what_it_pastes() -> None:
    from daemon.memory.prompt_terms import prose_of

    assert prose_of("why does the deploy fail?") is None
    assert prose_of("it broke:\n```\n$ make\nerror: no rule\n```\nany idea?") == "it broke:\nany idea?"
    trace = "TypeError in the cart:\n    at CartItems (CartItems.tsx:23:24)\n  File \"app.py\", line 3\nhelp?"
    assert prose_of(trace) == "TypeError in the cart:\nhelp?"
