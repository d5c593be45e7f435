/*
 * porter.h: header-only Porter stemmer for ASCII tokens.
 *
 * Gives exactly what NLTK's PorterStemmer().stem(word) gives in its default
 * NLTK_EXTENSIONS mode (the stemmer behind rouge-score's use_stemmer=True).
 * src/respeval/tokenizers/porter.py is the readable reference; keep the two
 * in step.
 *
 *   int respeval_porter_stem(const char *word, int len, char *out, int out_cap)
 *
 * word    len bytes, not necessarily NUL-terminated. Exact for any ASCII
 *         input (A-Z is lowercased, as NLTK lowercases); rouge-score only
 *         produces [a-z0-9]+. Bytes >= 0x80 are handled memory-safely but
 *         not as NLTK would handle the decoded code points.
 * out     receives the stem, without a terminating NUL. It may be the same
 *         pointer as word (stemming in place) but must not otherwise overlap.
 * out_cap must be >= len. A stem is never longer than its word, and all
 *         work is done inside out[0 .. len), so any length works without
 *         allocation or a fixed internal buffer.
 * returns the stem length, or -1 if out_cap < len or the arguments are
 *         invalid (len < 0, or a NULL pointer with len > 0).
 *
 * Pure C99 (also valid C++), no allocation, no mutable static state: safe to
 * call concurrently and without the GIL (declare it noexcept nogil in Cython).
 * Each call is O(len).
 */
#ifndef RESPEVAL_PORTER_H
#define RESPEVAL_PORTER_H

#include <string.h>

/* Suffix rule: the first rule whose suffix matches decides (see porter.py). */
typedef struct {
    const char *suffix;
    int suffix_len;
    const char *replacement;
    int replacement_len;
} respeval_porter_rule;

#define RESPEVAL_PORTER_RULE(s, r) { s, (int)sizeof(s) - 1, r, (int)sizeof(r) - 1 }

static inline int respeval_porter_is_vowel_(char c)
{
    return c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u';
}

/* A 'y' is a consonant at the start or after a vowel and a vowel after a
 * consonant, so only the run of 'y's ending at i has to be looked at.
 * Requires 0 <= i. */
static inline int respeval_porter_cons_(const char *w, int i)
{
    int flip = 0;
    while (i > 0 && w[i] == 'y') {
        flip ^= 1;
        i--;
    }
    return (!respeval_porter_is_vowel_(w[i])) ^ flip;
}

/* Porter's m: the number of vowel-to-consonant boundaries in w[0..k). */
static inline int respeval_porter_measure_(const char *w, int k)
{
    int m = 0, prev_cons = 0, i; /* prev_cons = 0 makes a leading 'y' a consonant */
    for (i = 0; i < k; i++) {
        int cons;
        if (respeval_porter_is_vowel_(w[i]))
            cons = 0;
        else if (w[i] == 'y')
            cons = !prev_cons;
        else
            cons = 1;
        if (cons && i > 0 && !prev_cons)
            m++;
        prev_cons = cons;
    }
    return m;
}

static inline int respeval_porter_has_vowel_(const char *w, int k)
{
    /* Past a leading 'y', any 'y' follows either a vowel (so there is one)
     * or a consonant (so the 'y' is one). */
    int i;
    for (i = 0; i < k; i++) {
        if (respeval_porter_is_vowel_(w[i]) || (i > 0 && w[i] == 'y'))
            return 1;
    }
    return 0;
}

static inline int respeval_porter_ends_(const char *w, int k, const char *s, int sl)
{
    return k >= sl && memcmp(w + k - sl, s, (size_t)sl) == 0;
}

#define RESPEVAL_PORTER_ENDS(w, k, lit) \
    respeval_porter_ends_((w), (k), (lit), (int)sizeof(lit) - 1)

static inline int respeval_porter_ends_double_cons_(const char *w, int k)
{
    return k >= 2 && w[k - 1] == w[k - 2] && respeval_porter_cons_(w, k - 1);
}

/* *o. NLTK also accepts a two-letter vowel-consonant stem, and for that case
 * does not exclude w, x and y. */
static inline int respeval_porter_ends_cvc_(const char *w, int k)
{
    if (k >= 3)
        return respeval_porter_cons_(w, k - 3) && !respeval_porter_cons_(w, k - 2)
            && respeval_porter_cons_(w, k - 1)
            && w[k - 1] != 'w' && w[k - 1] != 'x' && w[k - 1] != 'y';
    return k == 2 && !respeval_porter_cons_(w, 0) && respeval_porter_cons_(w, 1);
}

/* Replacements are never longer than their suffixes, so this stays inside
 * the word. */
static inline int respeval_porter_apply_(char *w, int k, const respeval_porter_rule *rules,
                                         int n_rules, int min_m)
{
    int r;
    for (r = 0; r < n_rules; r++) {
        const respeval_porter_rule *rule = &rules[r];
        if (respeval_porter_ends_(w, k, rule->suffix, rule->suffix_len)) {
            int stem = k - rule->suffix_len;
            if (respeval_porter_measure_(w, stem) <= min_m)
                return k;
            memcpy(w + stem, rule->replacement, (size_t)rule->replacement_len);
            return stem + rule->replacement_len;
        }
    }
    return k;
}

static inline int respeval_porter_step1a_(char *w, int k)
{
    if (k == 4 && RESPEVAL_PORTER_ENDS(w, k, "ies"))
        return 3; /* NLTK: ties -> tie, not ti */
    if (RESPEVAL_PORTER_ENDS(w, k, "sses") || RESPEVAL_PORTER_ENDS(w, k, "ies"))
        return k - 2;
    if (RESPEVAL_PORTER_ENDS(w, k, "ss"))
        return k;
    if (RESPEVAL_PORTER_ENDS(w, k, "s"))
        return k - 1;
    return k;
}

static inline int respeval_porter_step1b_(char *w, int k)
{
    int stem;
    if (RESPEVAL_PORTER_ENDS(w, k, "ied")) {
        /* NLTK: unconditional; "Xied" -> "Xie", longer ones -> "...i". */
        return k == 4 ? 3 : k - 2;
    }
    if (RESPEVAL_PORTER_ENDS(w, k, "eed"))
        return respeval_porter_measure_(w, k - 3) > 0 ? k - 1 : k;

    if (RESPEVAL_PORTER_ENDS(w, k, "ed") && respeval_porter_has_vowel_(w, k - 2))
        stem = k - 2;
    else if (RESPEVAL_PORTER_ENDS(w, k, "ing") && respeval_porter_has_vowel_(w, k - 3))
        stem = k - 3;
    else
        return k;

    /* Writing the restored 'e' at w[stem] is in bounds: stem < k. */
    if (RESPEVAL_PORTER_ENDS(w, stem, "at") || RESPEVAL_PORTER_ENDS(w, stem, "bl")
        || RESPEVAL_PORTER_ENDS(w, stem, "iz")) {
        w[stem] = 'e';
        return stem + 1;
    }
    if (respeval_porter_ends_double_cons_(w, stem)) {
        char c = w[stem - 1];
        return (c == 'l' || c == 's' || c == 'z') ? stem : stem - 1;
    }
    if (RESPEVAL_PORTER_ENDS(w, stem, "*d")) {
        /* NLTK spells the *d rule as the pseudo-suffix "*d", which also
         * matches a literal "*d" and drops the '*'. */
        w[stem - 2] = 'd';
        return stem - 1;
    }
    if (respeval_porter_measure_(w, stem) == 1 && respeval_porter_ends_cvc_(w, stem)) {
        w[stem] = 'e';
        return stem + 1;
    }
    return stem;
}

static inline int respeval_porter_step1c_(char *w, int k)
{
    /* NLTK: y -> i after a consonant that is not the first letter. */
    if (k > 2 && w[k - 1] == 'y' && respeval_porter_cons_(w, k - 2))
        w[k - 1] = 'i';
    return k;
}

static inline int respeval_porter_step2_(char *w, int k)
{
    static const respeval_porter_rule rules[] = {
        RESPEVAL_PORTER_RULE("ational", "ate"),
        RESPEVAL_PORTER_RULE("tional", "tion"),
        RESPEVAL_PORTER_RULE("enci", "ence"),
        RESPEVAL_PORTER_RULE("anci", "ance"),
        RESPEVAL_PORTER_RULE("izer", "ize"),
        RESPEVAL_PORTER_RULE("bli", "ble"),
        RESPEVAL_PORTER_RULE("alli", "al"),
        RESPEVAL_PORTER_RULE("entli", "ent"),
        RESPEVAL_PORTER_RULE("eli", "e"),
        RESPEVAL_PORTER_RULE("ousli", "ous"),
        RESPEVAL_PORTER_RULE("ization", "ize"),
        RESPEVAL_PORTER_RULE("ation", "ate"),
        RESPEVAL_PORTER_RULE("ator", "ate"),
        RESPEVAL_PORTER_RULE("alism", "al"),
        RESPEVAL_PORTER_RULE("iveness", "ive"),
        RESPEVAL_PORTER_RULE("fulness", "ful"),
        RESPEVAL_PORTER_RULE("ousness", "ous"),
        RESPEVAL_PORTER_RULE("aliti", "al"),
        RESPEVAL_PORTER_RULE("iviti", "ive"),
        RESPEVAL_PORTER_RULE("biliti", "ble"),
        RESPEVAL_PORTER_RULE("fulli", "ful"),
    };
    if (RESPEVAL_PORTER_ENDS(w, k, "alli") && respeval_porter_measure_(w, k - 4) > 0) {
        /* NLTK: -alli -> -al, then step 2 again on the result. */
        k -= 2;
    } else if (RESPEVAL_PORTER_ENDS(w, k, "logi") && respeval_porter_measure_(w, k - 3) > 0) {
        /* NLTK: -logi -> -log, measured with the 'l' kept. No table rule
         * ends in -logi, so testing it first changes nothing else. */
        return k - 1;
    }
    return respeval_porter_apply_(w, k, rules, (int)(sizeof rules / sizeof rules[0]), 0);
}

static inline int respeval_porter_step3_(char *w, int k)
{
    static const respeval_porter_rule rules[] = {
        RESPEVAL_PORTER_RULE("icate", "ic"),
        RESPEVAL_PORTER_RULE("ative", ""),
        RESPEVAL_PORTER_RULE("alize", "al"),
        RESPEVAL_PORTER_RULE("iciti", "ic"),
        RESPEVAL_PORTER_RULE("ical", "ic"),
        RESPEVAL_PORTER_RULE("ful", ""),
        RESPEVAL_PORTER_RULE("ness", ""),
    };
    return respeval_porter_apply_(w, k, rules, (int)(sizeof rules / sizeof rules[0]), 0);
}

static inline int respeval_porter_step4_(char *w, int k)
{
    static const respeval_porter_rule rules[] = {
        RESPEVAL_PORTER_RULE("al", ""),
        RESPEVAL_PORTER_RULE("ance", ""),
        RESPEVAL_PORTER_RULE("ence", ""),
        RESPEVAL_PORTER_RULE("er", ""),
        RESPEVAL_PORTER_RULE("ic", ""),
        RESPEVAL_PORTER_RULE("able", ""),
        RESPEVAL_PORTER_RULE("ible", ""),
        RESPEVAL_PORTER_RULE("ant", ""),
        RESPEVAL_PORTER_RULE("ement", ""),
        RESPEVAL_PORTER_RULE("ment", ""),
        RESPEVAL_PORTER_RULE("ent", ""),
        RESPEVAL_PORTER_RULE("ou", ""),
        RESPEVAL_PORTER_RULE("ism", ""),
        RESPEVAL_PORTER_RULE("ate", ""),
        RESPEVAL_PORTER_RULE("iti", ""),
        RESPEVAL_PORTER_RULE("ous", ""),
        RESPEVAL_PORTER_RULE("ive", ""),
        RESPEVAL_PORTER_RULE("ize", ""),
    };
    /* -ion also needs the stem to end in s or t; the measure is checked
     * first so that stem is non-empty. No other step 4 suffix ends in -ion,
     * so handling it apart keeps the first-match order. */
    if (RESPEVAL_PORTER_ENDS(w, k, "ion")) {
        int stem = k - 3;
        if (respeval_porter_measure_(w, stem) > 1 && (w[stem - 1] == 's' || w[stem - 1] == 't'))
            return stem;
        return k;
    }
    return respeval_porter_apply_(w, k, rules, (int)(sizeof rules / sizeof rules[0]), 1);
}

static inline int respeval_porter_step5_(char *w, int k)
{
    if (k > 0 && w[k - 1] == 'e') {
        int m = respeval_porter_measure_(w, k - 1);
        if (m > 1 || (m == 1 && !respeval_porter_ends_cvc_(w, k - 1)))
            k--;
    }
    /* 5b measures the word without its last 'l' (its first 'l' kept). */
    if (RESPEVAL_PORTER_ENDS(w, k, "ll") && respeval_porter_measure_(w, k - 1) > 1)
        k--;
    return k;
}

/* NLTK_EXTENSIONS answers these before applying any rule. */
static inline int respeval_porter_irregular_(char *w, int k)
{
    static const respeval_porter_rule forms[] = {
        RESPEVAL_PORTER_RULE("sky", "sky"),
        RESPEVAL_PORTER_RULE("skies", "sky"),
        RESPEVAL_PORTER_RULE("dying", "die"),
        RESPEVAL_PORTER_RULE("lying", "lie"),
        RESPEVAL_PORTER_RULE("tying", "tie"),
        RESPEVAL_PORTER_RULE("news", "news"),
        RESPEVAL_PORTER_RULE("innings", "inning"),
        RESPEVAL_PORTER_RULE("inning", "inning"),
        RESPEVAL_PORTER_RULE("outings", "outing"),
        RESPEVAL_PORTER_RULE("outing", "outing"),
        RESPEVAL_PORTER_RULE("cannings", "canning"),
        RESPEVAL_PORTER_RULE("canning", "canning"),
        RESPEVAL_PORTER_RULE("howe", "howe"),
        RESPEVAL_PORTER_RULE("proceed", "proceed"),
        RESPEVAL_PORTER_RULE("exceed", "exceed"),
        RESPEVAL_PORTER_RULE("succeed", "succeed"),
    };
    int r;
    for (r = 0; r < (int)(sizeof forms / sizeof forms[0]); r++) {
        if (forms[r].suffix_len == k && memcmp(w, forms[r].suffix, (size_t)k) == 0) {
            memcpy(w, forms[r].replacement, (size_t)forms[r].replacement_len);
            return forms[r].replacement_len;
        }
    }
    return -1;
}

static inline int respeval_porter_stem(const char *word, int len, char *out, int out_cap)
{
    int k, i;
    if (len < 0 || out_cap < len || (len > 0 && (word == NULL || out == NULL)))
        return -1;
    for (i = 0; i < len; i++) {
        char c = word[i];
        out[i] = (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
    }
    k = respeval_porter_irregular_(out, len);
    if (k >= 0)
        return k;
    if (len <= 2)
        return len;
    k = respeval_porter_step1a_(out, len);
    k = respeval_porter_step1b_(out, k);
    k = respeval_porter_step1c_(out, k);
    k = respeval_porter_step2_(out, k);
    k = respeval_porter_step3_(out, k);
    k = respeval_porter_step4_(out, k);
    return respeval_porter_step5_(out, k);
}

#undef RESPEVAL_PORTER_ENDS
#undef RESPEVAL_PORTER_RULE

#endif /* RESPEVAL_PORTER_H */
