"""Splitting text into words, and the words too common to be worth listing."""

from __future__ import annotations

import re

# Runs of letters, with inner apostrophes kept: "don't" and "o'clock" are one word each, while
# the quotes around 'this' are not part of it. Digits and underscores are not letters.
WORD_PATTERN = r"[^\W\d_]+(?:'[^\W\d_]+)*"

# English function words, left out of the word and n-gram tables: a classic information
# retrieval stop list, with the contractions of its words added.
STOPWORDS = [
    "a", "about", "above", "across", "after", "afterwards", "again", "against", "ain't", "all",
    "almost", "alone", "along", "already", "also", "although", "always", "am", "among", "amongst",
    "amount", "an", "and", "another", "any", "anyhow", "anyone", "anything", "anyway", "anywhere",
    "are", "aren't", "around", "as", "at", "back", "be", "became", "because", "become", "becomes",
    "becoming", "been", "before", "beforehand", "behind", "being", "below", "beside", "besides",
    "between", "beyond", "both", "bottom", "but", "by", "call", "can", "can't", "cannot", "could",
    "couldn't", "did", "didn't", "do", "does", "doesn't", "doing", "don't", "done", "down", "due",
    "during", "each", "eg", "eight", "either", "eleven", "else", "elsewhere", "empty", "enough",
    "etc", "even", "ever", "every", "everyone", "everything", "everywhere", "except", "few",
    "fifteen", "fifty", "fill", "first", "five", "for", "former", "formerly", "forty", "four",
    "from", "front", "full", "further", "get", "give", "go", "had", "hadn't", "has", "hasn't",
    "have", "haven't", "having", "he", "he'd", "he'll", "he's", "hence", "her", "here", "here's",
    "hereafter", "hereby", "herein", "hereupon", "hers", "herself", "him", "himself", "his", "how",
    "how's", "however", "hundred", "i", "i'd", "i'll", "i'm", "i've", "ie", "if", "in", "inc",
    "indeed", "interest", "into", "is", "isn't", "it", "it's", "its", "itself", "just", "keep",
    "last", "latter", "latterly", "least", "less", "let's", "ltd", "made", "many", "may", "me",
    "meanwhile", "might", "mightn't", "mine", "more", "moreover", "most", "mostly", "move", "much",
    "must", "mustn't", "my", "myself", "name", "namely", "neither", "never", "nevertheless",
    "next", "nine", "no", "nobody", "none", "noone", "nor", "not", "nothing", "now", "nowhere",
    "of", "off", "often", "on", "once", "one", "only", "onto", "or", "other", "others",
    "otherwise", "our", "ours", "ourselves", "out", "over", "own", "part", "per", "perhaps",
    "please", "put", "rather", "re", "same", "see", "seem", "seemed", "seeming", "seems",
    "serious", "several", "shan't", "she", "she'd", "she'll", "she's", "should", "should've",
    "shouldn't", "show", "side", "since", "six", "sixty", "so", "some", "somehow", "someone",
    "something", "sometime", "sometimes", "somewhere", "still", "such", "take", "ten", "than",
    "that", "that'll", "that's", "the", "their", "theirs", "them", "themselves", "then", "thence",
    "there", "there's", "thereafter", "thereby", "therefore", "therein", "thereupon", "these",
    "they", "they'd", "they'll", "they're", "they've", "third", "this", "those", "though", "three",
    "through", "throughout", "thru", "thus", "to", "together", "too", "top", "toward", "towards",
    "twelve", "twenty", "two", "un", "under", "until", "up", "upon", "us", "very", "via", "was",
    "wasn't", "we", "we'd", "we'll", "we're", "we've", "well", "were", "weren't", "what", "what's",
    "whatever", "when", "whence", "whenever", "where", "where's", "whereafter", "whereas",
    "whereby", "wherein", "whereupon", "wherever", "whether", "which", "while", "whither", "who",
    "who's", "whoever", "whole", "whom", "whose", "why", "why's", "will", "with", "within",
    "without", "won't", "would", "wouldn't", "yet", "you", "you'd", "you'll", "you're", "you've",
    "your", "yours", "yourself", "yourselves",
]


def words(text: str) -> list[str]:
    """The words of `text`, lower-cased, with typographic apostrophes made plain."""
    pattern = re.compile(WORD_PATTERN)
    return pattern.findall(text.lower().replace("\u2019", "'"))


def is_stopword(word: str) -> bool:
    return word in STOPWORDS
