from textstat.words import STOPWORDS, is_stopword, words


def test_words_are_lower_cased_runs_of_letters():
    assert words("The Keeper climbed 3 stairs, at 10:45.") == [
        "the",
        "keeper",
        "climbed",
        "stairs",
        "at",
    ]


def test_inner_apostrophes_stay_and_quotes_go():
    assert words("Don't say 'never' o'clock") == ["don't", "say", "never", "o'clock"]


def test_typographic_apostrophes_are_made_plain():
    assert words("He\u2019d been holding it") == ["he'd", "been", "holding", "it"]


def test_letters_beyond_ascii_are_letters():
    assert words("Café naïve Jörg") == ["café", "naïve", "jörg"]


def test_underscores_and_digits_split_words():
    assert words("snake_case v2x") == ["snake", "case", "v", "x"]


def test_stopwords_are_lower_case_words_the_tokenizer_can_produce():
    for word in STOPWORDS:
        assert words(word) == [word]


def test_is_stopword():
    assert is_stopword("the")
    assert is_stopword("don't")
    assert not is_stopword("keeper")
