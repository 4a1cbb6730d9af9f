"""The pure half of the lexical "not found" (``agents.roles.absence``): the names a question gives, the index
words that stand for them, and the spelling tolerance that keeps a misspelt name from being turned away."""

from __future__ import annotations

from agents.roles.absence import absent_reason, lookup_words, named_terms, near_spelling, unknown


def test_named_terms_are_capitalised_words_after_the_first_and_identifiers() -> None:
    assert named_terms("What is the default value of PostgreSQL's log_compression setting?") == [
        "PostgreSQL",
        "log_compression",
    ]
    assert named_terms("Mongolia's capital is what?") == []  # the first word is not a name
    assert named_terms("What does datetime.MAXYEAR hold, and what does os.getcwd() return?") == [
        "datetime.MAXYEAR",
        "os.getcwd()",
    ]
    assert named_terms("who wrote this?") == []


def test_lookup_words_are_index_words_of_three_letters_or_more() -> None:
    assert lookup_words("PostgreSQL") == ["postgresql"]
    assert lookup_words("log_compression") == ["log_compression"]  # one word of the sparse index, not two
    assert lookup_words("datetime.MAXYEAR") == ["maxyear"]  # a dotted identifier by its last part
    assert lookup_words("os.getcwd()") == ["getcwd"]
    assert named_terms("Who was the 5Th Earl?") == ["Th", "Earl"]
    assert lookup_words("Th") == []  # too short to look up
    assert lookup_words("Jean-Paul") == ["jean", "paul"]


def test_near_spelling_allows_an_edit_by_length_and_a_glued_word() -> None:
    assert near_spelling("margaraviate", {"margraviate", "austria"}) == "margraviate"  # one letter inserted
    assert near_spelling("gothais", {"gotha"}) == "gotha"  # "Gotha is" written as one word
    assert near_spelling("mongolia", {"mongolian"}) == "mongolian"
    assert near_spelling("slack", {"stack", "black"}) == ""  # five letters: exact only
    assert near_spelling("mysql", {"postgresql"}) == ""
    assert near_spelling("inception", {"perception"}) == ""  # three edits
    assert near_spelling("cheese", {"che"}) == ""  # a known word of three letters glues on to too much


def test_a_name_is_unknown_only_when_every_word_of_it_is_missing_with_no_near_spelling() -> None:
    names = ["Mongolia", "Van-Hook", "Margaraviate"]
    missing = {"mongolia", "van", "margaraviate"}
    assert unknown(names, missing, set()) == ["Mongolia", "Margaraviate"]  # "hook" is known
    assert unknown(names, missing, {"margraviate"}) == ["Mongolia"]
    assert unknown(["Th"], {"th"}, set()) == []  # no word to look up: never unknown


def test_the_reason_names_what_is_missing() -> None:
    reason = absent_reason(["Mongolia", "log_compression"])
    assert "'Mongolia'" in reason and "'log_compression'" in reason and "never mentions" in reason
