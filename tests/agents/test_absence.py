"""The pure half of the lexical "not found" (``agents.roles.absence``): the names a question gives, the index
words that stand for them, and the spelling tolerance that keeps a misspelt name from being turned away."""

from __future__ import annotations

from agents.roles.absence import (
    Seen,
    absent_reason,
    asks,
    fold,
    lookup_words,
    named_phrases,
    named_terms,
    near_spelling,
    phrase_unknown,
    unknown,
)


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


def test_near_spelling_allows_an_edit_by_length_a_glued_word_accents_and_compounds() -> None:
    def near(word: str, *texts: str) -> str:
        return near_spelling(word, Seen.of(texts))

    assert near("margaraviate", "The Margraviate of Austria") == "margraviate"  # one letter inserted
    assert near("gothais", "originally based in Gotha") == "gotha"  # "Gotha is" written as one word
    assert near("mongolia", "the Mongolian steppe") == "mongolian"
    assert near("sao", "São Paulo is a city") == "sao"  # accents aside, even for three letters
    assert near("jorgen", "Jørgen Buckhøj") == "jørgen"  # "ø" is a letter of its own: one edit
    assert near("spiderman", "Spider-Man is a superhero") == "spiderman"  # written apart
    assert near("slack", "a stack and a black cat") == ""  # five letters: exact only
    assert near("mysql", "PostgreSQL") == ""
    assert near("inception", "perception") == ""  # three edits
    assert near("cheese", "che") == ""  # a known word of three letters glues on to too much
    assert near("log_compression", "wal_compression and log compression") == ""  # identifiers: not read as joined
    assert fold("São Jørgen") == "sao jørgen"


def test_a_name_is_unknown_only_when_every_word_of_it_is_missing_with_no_near_spelling() -> None:
    names = ["Mongolia", "Van-Hook", "Margaraviate"]
    missing = {"mongolia", "van", "margaraviate"}
    assert unknown(names, missing) == ["Mongolia", "Margaraviate"]  # "hook" is known
    assert unknown(names, missing, Seen.of(["Margraviate of Austria"])) == ["Mongolia"]
    assert unknown(["Th"], {"th"}) == []  # no word to look up: never unknown


def test_named_phrases_are_runs_of_capitalised_words_after_the_first() -> None:
    q = "When did the spouse of Lil Hardin Armstrong make What a Wonderful World?"
    assert named_phrases(q) == ["Lil Hardin Armstrong", "Wonderful World"]  # "What a" breaks the run
    assert named_phrases("Tina Arena sang for Christopher Nolan's film in Spider-Man") == [
        "Tina Arena",  # a name may open the question
        "Christopher Nolan",  # the possessive ends a name
        "Spider Man",
    ]
    assert named_phrases("Which Python module?") == [] and named_phrases("Did Sam Raimi?") == ["Sam Raimi"]
    assert named_phrases("What is James Woods' character?") == ["James Woods"]
    assert named_phrases("Who was born in Van Hook, New York?") == ["Van Hook", "New York"]  # a comma ends a name
    assert named_phrases("Did Ed Roland sing?") == []  # "ed" is too short to look up: one word left


def test_a_phrase_is_unknown_when_no_passage_holds_its_words_together() -> None:
    assert phrase_unknown("Wonderful World", 1) and not phrase_unknown("Wonderful World", 2)
    assert not phrase_unknown("Lil Hardin Armstrong", 2)  # all but one of three: "Lillian Hardin Armstrong"
    assert phrase_unknown("Lil Hardin Armstrong", 1)


def test_only_a_message_that_asks_something_is_checked() -> None:
    assert asks("What is the capital of Mongolia?")
    assert asks("Who directed the film that was shot in or around Leland, North Carolina in 1986")  # no "?"
    assert asks("In which town was the engineer born") and asks("Tell me about Harrow Point?")
    assert not asks("Thanks, Waypoint!") and not asks("I'm Bob.") and not asks("Summarise the Harrow document.")


def test_the_reason_names_what_is_missing() -> None:
    reason = absent_reason(["Mongolia", "log_compression"])
    assert "'Mongolia'" in reason and "'log_compression'" in reason and "never mentions" in reason
