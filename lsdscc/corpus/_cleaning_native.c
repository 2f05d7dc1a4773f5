/* The lsdscc fast path of lsdscc/corpus/cleaning.py in C, and the vocabulary's rewrite.
 *
 * tail(text, lowercase) returns the tokens that cleaning.lsdscc_tail(text, lowercase)
 * returns (emoticons and emoji, elongated words, laughter, lowercasing, the lsdscc character
 * rules, the Treebank rules left for lsdscc text, whitespace split), or None where it does
 * not decide (a shrug): the caller then runs the Python steps.
 * plain(text, lowercase, literal) does the whole of cleaning._lsdscc_fast for a text that the
 * markup, e-mail and url steps leave as it is, or tells why it may not (cleaning._native_plain
 * runs those steps first where it can). With counts (a dict), both count the tokens into it
 * and return them joined by single spaces (cleaning.clean_and_count). apply_vocabulary is
 * lsdscc.corpus.vocab.Vocabulary.apply_text. Each function names the Python it reproduces;
 * tests/test_lsdscc_cleaning_native.py compares the two on Reddit-shaped, random and hostile
 * text and on every code point. configure(tables) takes, once before the first call, every
 * table and trigger the code uses (cleaning.native_tables: the emoticons, domain endings,
 * contractions, character classes, the laughter guards and the words laughter becomes, the
 * triggers of strip_markup's rules and its line rules):
 * it holds no copy of its own, and where it must decide a rule it asks the Python definition
 * (a line rule) or derives the decision from what it was given (issue 31).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>
#include <wchar.h>

#if defined(__GNUC__) || defined(__clang__)
#define PREFETCH(p) __builtin_prefetch(p)  /* (a hint: fetched into the cache, nothing else) */
#else
#define PREFETCH(p) ((void)(p))
#endif

typedef struct {
    Py_UCS4 *p;
    Py_ssize_t n, cap;
} Buf;

static int buf_init(Buf *b, Py_ssize_t cap) {
    b->n = 0;
    b->cap = cap < 16 ? 16 : cap;
    b->p = PyMem_Malloc(sizeof(Py_UCS4) * b->cap);
    if (!b->p) { PyErr_NoMemory(); return -1; }
    return 0;
}

static int buf_grow(Buf *b, Py_ssize_t extra) {
    if (b->n + extra <= b->cap) return 0;
    Py_ssize_t cap = b->cap * 2;
    if (cap < b->n + extra) cap = b->n + extra;
    Py_UCS4 *p = PyMem_Realloc(b->p, sizeof(Py_UCS4) * cap);
    if (!p) { PyErr_NoMemory(); return -1; }
    b->p = p;
    b->cap = cap;
    return 0;
}

static inline int buf_put(Buf *b, Py_UCS4 c) {
    if (b->n == b->cap && buf_grow(b, 1) < 0) return -1;
    b->p[b->n++] = c;
    return 0;
}

static int buf_puts(Buf *b, const char *s) {
    Py_ssize_t k = (Py_ssize_t)strlen(s);
    if (buf_grow(b, k) < 0) return -1;
    for (Py_ssize_t i = 0; i < k; i++) b->p[b->n++] = (unsigned char)s[i];
    return 0;
}

static int buf_putu(Buf *b, const Py_UCS4 *s, Py_ssize_t k) {
    if (buf_grow(b, k) < 0) return -1;
    memcpy(b->p + b->n, s, sizeof(Py_UCS4) * k);
    b->n += k;
    return 0;
}

static void buf_free(Buf *b) {
    PyMem_Free(b->p);
    b->p = NULL;
}

/* Buffers given back (buf_give) for the next buf_take: a text takes no malloc for its steps'
   buffers once a few texts have been read. A buffer over POOL_KEEP characters is freed. */
#define POOL 6
#define POOL_KEEP (1 << 16)  /* (6 x 256 KB at most kept, a 10,000-character body's steps fit) */
static Buf pool[POOL];
static int pooled;

static int buf_take(Buf *b, Py_ssize_t cap) {
    if (!pooled) return buf_init(b, cap);
    *b = pool[--pooled];
    b->n = 0;
    if (buf_grow(b, cap) < 0) { buf_free(b); return -1; }
    return 0;
}

static void buf_give(Buf *b) {
    if (b->p && pooled < POOL && b->cap <= POOL_KEEP) {
        pool[pooled++] = *b;
        b->p = NULL;
    } else {
        buf_free(b);
    }
}

/* the result of one step becomes the input of the next */
static void buf_swap(Buf *a, Buf *b) {
    Buf t = *a;
    *a = *b;
    *b = t;
    b->n = 0;
}

/* ASCII case folding (re.I on the ASCII letters) */
static inline Py_UCS4 fold(Py_UCS4 c) { return c >= 'A' && c <= 'Z' ? c + 32 : c; }

/* the characters outside ASCII that re.I matches with an ASCII letter, and that letter
   (configure's case_folds: rule_tables.re_case_folds) */
#define MAX_FOLDS 16
static Py_UCS4 fold_from[MAX_FOLDS];
static char fold_to[MAX_FOLDS];
static int n_folds;

/* re.I's folding: fold() on ASCII, the case_folds outside it */
static inline Py_UCS4 fold_re(Py_UCS4 c) {
    if (c < 128) return fold(c);
    for (int k = 0; k < n_folds; k++)
        if (fold_from[k] == c) return (unsigned char)fold_to[k];
    return c;
}

/* the lowercase ASCII string s at b->p[i], as re.I matches it */
static int fold_match(const Buf *b, Py_ssize_t i, const char *s) {
    for (Py_ssize_t j = 0; s[j]; j++)
        if (i + j >= b->n || fold_re(b->p[i + j]) != (unsigned char)s[j]) return 0;
    return 1;
}

/* re's \s, \w and \d on str (str.isspace, str.isalnum or _, str.isdecimal), ASCII inline */
static inline int is_letter(Py_UCS4 c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static inline int is_space(Py_UCS4 c) { return Py_UNICODE_ISSPACE(c); }
static inline int is_decimal(Py_UCS4 c) { return c < 128 ? c >= '0' && c <= '9' : Py_UNICODE_ISDECIMAL(c); }
static inline int is_word(Py_UCS4 c) {
    return c < 128 ? is_letter(c) || (c >= '0' && c <= '9') || c == '_' : Py_UNICODE_ISALNUM(c);
}

/* What each ASCII character asks of the passes below (0: nothing; most letters). configure()
   sets K_FACE (first characters of faces), K_REFUSE (last characters of the triggers, the
   period of a domain ending, the unprintable), K_TO_SPACE, K_PAD, K_BANG and K_LAUGH (first
   letters of the laughter guards) from its tables. */
enum {
    K_FACE = 1 << 0, K_LAUGH = 1 << 1, K_REFUSE = 1 << 2, K_QUOTE2 = 1 << 3, K_DIGIT = 1 << 4, K_BANG = 1 << 5,
    K_UPPER = 1 << 6, K_TO_SPACE = 1 << 7, K_QUOTE = 1 << 8, K_COLON_COMMA = 1 << 9, K_PAD = 1 << 10, K_DASH = 1 << 11,
};
static unsigned short ascii_class[128];

static void init_classes(void) {
    for (int c = 0; c < 128; c++) {
        unsigned short k = 0;
        if (c == '\'' || c == '`') k |= K_QUOTE2;
        if (c >= '0' && c <= '9') k |= K_DIGIT;
        if (c >= 'A' && c <= 'Z') k |= K_UPPER;
        if (c == '"') k |= K_QUOTE;
        if (c == ',' || c == ':') k |= K_COLON_COMMA;
        if (c == '-') k |= K_DASH;
        ascii_class[c] = k;
    }
}

/* --- the tables (configure) ------------------------------------------------------------- */
typedef struct {
    Py_UCS4 *text;
    Py_ssize_t len;
    char word[32];
} Entry;

typedef struct {
    Py_UCS4 *p;
    Py_ssize_t n;
} Str;

typedef struct {  /* a trigger of a cause plain() gives (cleaning.NATIVE_TRIGGERS) */
    Str text;
    int cause;
} Trigger;

typedef struct {  /* cleaning.CONTRACTIONS (before_space: CONTRACTIONS_BEFORE_SPACE) */
    char a[8], b[8];
    int before_space;
} Contraction;

typedef struct {  /* a line rule of strip_markup (cleaning.NATIVE_LINE_RULES) */
    unsigned char ascii[128];  /* the ASCII characters its match can start with */
    Str wide;                  /* those outside ASCII */
    int digits, anything, cause;
    PyObject *match;           /* the rule's pattern.match */
} LineRule;

typedef struct {
    Entry *faces, *emoji;
    Py_ssize_t n_faces, n_emoji;
    /* faces by first character: face_by_first[c][0..face_count[c]) index faces, longest first */
    Py_ssize_t *face_index, *face_by_first[128], face_count[128];
    Py_UCS4 emoji_min;
    unsigned char face_follower[128];
    Str *undecided;  /* strings that leave a text to Python (the shrug), each found at its anchor */
    Py_ssize_t *anchor, n_undecided;
    Py_UCS4 fold_from[MAX_FOLDS];
    char fold_to[MAX_FOLDS];
    int n_folds;
    char (*tlds)[16];
    Py_ssize_t n_tlds, *tld_len;
    Contraction *contractions;
    Py_ssize_t n_contractions;
    unsigned char contraction_first[128];
    char digits[8];                 /* the word a digit run becomes (DIGITS) */
    Py_UCS4 open, close;            /* the stand-ins of `` and '' (cleaning._OPEN, _CLOSE) */
    unsigned char open_after[128];  /* OPEN_QUOTE_AFTER */
    Str to_space_wide;  /* TO_SPACE's characters outside ASCII */
    Py_UCS4 special_max;  /* the highest character of TO_SPACE and WIDE */
    Py_UCS4 *wide_from;
    Str *wide_to;
    Py_ssize_t n_wide;
    Trigger *triggers;
    Py_ssize_t n_triggers, *trigger_index, *by_last[128], n_by_last[128];  /* triggers by last character */
    LineRule *line_rules;
    Py_ssize_t n_line_rules;
    unsigned char line_start[128];  /* an ASCII character a line rule's match can start with */
    Str laugh[16];                /* LAUGH_GUARDS' strings (lowercase ASCII letters), bit k for laugh[k] */
    int n_laugh, laugh_groups[3];
    unsigned laugh_mask[3][4];    /* a pass runs where the text holds a string of each of its groups */
    unsigned short laugh_first[128], laugh_second[128];  /* the strings with that first, second letter */
    Str laugh_word[3];            /* LAUGH_WORDS: what each pass writes for a match */
    unsigned short classes[128];  /* K_FACE, K_REFUSE, K_TO_SPACE, K_PAD, K_BANG, K_LAUGH */
    int ready;
} Tables;

static Tables T;

static void free_entries(Entry *e, Py_ssize_t n) {
    for (Py_ssize_t i = 0; e && i < n; i++) PyMem_Free(e[i].text);
    PyMem_Free(e);
}

static void free_strs(Str *s, Py_ssize_t n) {
    for (Py_ssize_t i = 0; s && i < n; i++) PyMem_Free(s[i].p);
    PyMem_Free(s);
}

static void free_tables(Tables *t) {
    free_entries(t->faces, t->n_faces);
    free_entries(t->emoji, t->n_emoji);
    for (int k = 0; k < t->n_laugh; k++) PyMem_Free(t->laugh[k].p);
    for (int p = 0; p < 3; p++) PyMem_Free(t->laugh_word[p].p);
    PyMem_Free(t->face_index);
    free_strs(t->undecided, t->n_undecided);
    PyMem_Free(t->anchor);
    PyMem_Free(t->tlds);
    PyMem_Free(t->tld_len);
    PyMem_Free(t->trigger_index);
    PyMem_Free(t->contractions);
    PyMem_Free(t->to_space_wide.p);
    PyMem_Free(t->wide_from);
    free_strs(t->wide_to, t->n_wide);
    for (Py_ssize_t i = 0; t->triggers && i < t->n_triggers; i++) PyMem_Free(t->triggers[i].text.p);
    PyMem_Free(t->triggers);
    for (Py_ssize_t i = 0; t->line_rules && i < t->n_line_rules; i++) {
        PyMem_Free(t->line_rules[i].wide.p);
        Py_XDECREF(t->line_rules[i].match);
    }
    PyMem_Free(t->line_rules);
    memset(t, 0, sizeof *t);
}

/* a word the scan's findings do not see: lowercase ASCII letters, no letter three times in a
   row, none of the laughter guards' strings (t's) */
static int plain_word(const char *w, const Tables *t) {
    size_t n = strlen(w);
    if (!n) return 0;
    for (size_t i = 0; i < n; i++)
        if (w[i] < 'a' || w[i] > 'z' || (i >= 2 && w[i] == w[i - 1] && w[i] == w[i - 2])) return 0;
    for (int k = 0; k < t->n_laugh; k++)
        for (size_t i = 0; i + t->laugh[k].n <= n; i++) {
            Py_ssize_t j = 0;
            while (j < t->laugh[k].n && (unsigned char)w[i + j] == t->laugh[k].p[j]) j++;
            if (j == t->laugh[k].n) return 0;
        }
    return 1;
}

static int bad_table(const char *name, const char *why) {
    if (!PyErr_Occurred()) PyErr_Format(PyExc_ValueError, "configure: %s: %s", name, why);
    return -1;
}

/* tables[name], borrowed (NULL with the error set where missing or not of the type) */
static PyObject *table_item(PyObject *tables, const char *name, PyTypeObject *type) {
    PyObject *item = PyDict_GetItemString(tables, name);
    if (!item || !PyObject_TypeCheck(item, type)) {
        PyErr_Format(PyExc_TypeError, "configure: %s: a %s, please", name, type->tp_name);
        return NULL;
    }
    return item;
}

static int to_str(PyObject *o, Str *out, const char *name) {
    out->p = NULL;
    if (!PyUnicode_Check(o) || PyUnicode_GetLength(o) < 1) return bad_table(name, "non-empty strings, please");
    out->n = PyUnicode_GetLength(o);
    out->p = PyUnicode_AsUCS4Copy(o);
    return out->p ? 0 : -1;
}

/* an ASCII string of lowercase letters (1 to size - 1 of them) into out */
static int to_letters(PyObject *o, char *out, size_t size, const char *name) {
    const char *s = PyUnicode_Check(o) ? PyUnicode_AsUTF8(o) : NULL;
    if (!s || !*s || strlen(s) >= size) return bad_table(name, "short lowercase ASCII words, please");
    for (const char *c = s; *c; c++)
        if (*c < 'a' || *c > 'z') return bad_table(name, "short lowercase ASCII words, please");
    strcpy(out, s);
    return 0;
}

/* dict face -> word as an array, longest first (a face or emoji matches as its longest
   table entry that fits: the trie regexes try longer entries first) */
static int load_table(PyObject *dict, Entry **out, Py_ssize_t *count, const Tables *t) {
    Py_ssize_t n = PyDict_Size(dict), pos = 0, i = 0;
    Entry *e = PyMem_Calloc(n ? n : 1, sizeof(Entry));
    if (!e) { PyErr_NoMemory(); return -1; }
    *out = e;
    PyObject *key, *value;
    while (PyDict_Next(dict, &pos, &key, &value)) {
        const char *word = PyUnicode_Check(value) ? PyUnicode_AsUTF8(value) : NULL;
        if (!PyUnicode_Check(key) || !word || strlen(word) >= sizeof(e[i].word) || PyUnicode_GetLength(key) < 1)
            return bad_table("emoticons", "bad emoticon table entry");
        if (!plain_word(word, t)) {
            PyErr_Format(PyExc_ValueError, "emotion word %R: lowercase ASCII letters without a letter "
                         "three times in a row or laughter, please", value);
            return -1;
        }
        e[i].text = PyUnicode_AsUCS4Copy(key);
        if (!e[i].text) return -1;
        e[i].len = PyUnicode_GetLength(key);
        strcpy(e[i].word, word);
        *count = ++i;
    }
    for (Py_ssize_t a = 1; a < n; a++)  /* insertion sort, longest first */
        for (Py_ssize_t b = a; b > 0 && e[b].len > e[b - 1].len; b--) {
            Entry t = e[b]; e[b] = e[b - 1]; e[b - 1] = t;
        }
    return 0;
}

/* LAUGH_WORDS: one short word of lowercase ASCII letters a pass (they change none of the scan's
   findings: no quote, no character outside ASCII, no letter run that shorten_letters would see) */
static int load_laugh_words(PyObject *tables, Tables *t) {
    PyObject *words = table_item(tables, "laugh_words", &PyTuple_Type);
    if (!words || PyTuple_GET_SIZE(words) != 3) return words ? bad_table("laugh_words", "three words, please") : -1;
    for (int p = 0; p < 3; p++) {
        char word[32];
        if (to_letters(PyTuple_GET_ITEM(words, p), word, sizeof word, "laugh_words") < 0
            || to_str(PyTuple_GET_ITEM(words, p), &t->laugh_word[p], "laugh_words") < 0)
            return -1;
    }
    return 0;
}

/* LAUGH_GUARDS: three passes (_AH_WORD, _LAUGH_HE, _LAUGH_LOL), each groups of strings of
   lowercase ASCII letters that text.lower() cannot make out of other characters (not one that
   re.I folds a character outside ASCII into: tail() compares them with ASCII folding) */
static int load_laughter(PyObject *tables, Tables *t) {
    PyObject *passes = table_item(tables, "laugh_guards", &PyTuple_Type);
    if (!passes || PyTuple_GET_SIZE(passes) != 3) return passes ? bad_table("laugh_guards", "three passes, please") : -1;
    for (int p = 0; p < 3; p++) {
        PyObject *groups = PyTuple_GET_ITEM(passes, p);
        if (!PyTuple_Check(groups) || PyTuple_GET_SIZE(groups) > 4) return bad_table("laugh_guards", "up to 4 groups a pass, please");
        t->laugh_groups[p] = (int)PyTuple_GET_SIZE(groups);
        for (int g = 0; g < t->laugh_groups[p]; g++) {
            PyObject *group = PyTuple_GET_ITEM(groups, g);
            if (!PyTuple_Check(group)) return bad_table("laugh_guards", "groups of strings, please");
            for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(group); k++) {
                char word[16];
                if (t->n_laugh == 16) return bad_table("laugh_guards", "16 strings at most, please");
                if (to_letters(PyTuple_GET_ITEM(group, k), word, sizeof word, "laugh_guards") < 0) return -1;
                if (strlen(word) < 2) return bad_table("laugh_guards", "strings of 2 letters or more, please");
                for (char *w = word; *w; w++)
                    for (int f = 0; f < t->n_folds; f++)
                        if (*w == t->fold_to[f]) return bad_table("laugh_guards", "no letter re.I folds other characters into");
                if (to_str(PyTuple_GET_ITEM(group, k), &t->laugh[t->n_laugh], "laugh_guards") < 0) return -1;
                t->laugh_first[(unsigned char)word[0]] |= 1u << t->n_laugh;
                t->laugh_second[(unsigned char)word[1]] |= 1u << t->n_laugh;
                t->laugh_mask[p][g] |= 1u << t->n_laugh++;
                t->classes[(unsigned char)word[0]] |= K_LAUGH;
                t->classes[(unsigned char)word[0] ^ 32] |= K_LAUGH;
            }
        }
    }
    return load_laugh_words(tables, t);
}

static int load_emoticons(PyObject *tables, Tables *t) {
    PyObject *faces = table_item(tables, "faces", &PyDict_Type), *emoji = table_item(tables, "emoji", &PyDict_Type);
    PyObject *followers = table_item(tables, "face_followers", &PyUnicode_Type);
    if (!faces || !emoji || !followers || load_laughter(tables, t) < 0 || load_table(faces, &t->faces, &t->n_faces, t) < 0
        || load_table(emoji, &t->emoji, &t->n_emoji, t) < 0)
        return -1;
    for (Py_ssize_t i = 0; i < t->n_faces; i++)  /* (no laughter guard's string can then be in a face) */
        for (Py_ssize_t j = 0; j < t->faces[i].len; j++)
            if (t->faces[i].text[j] > 127 || (t->classes[t->faces[i].text[j]] & K_LAUGH))
                return bad_table("faces", "faces must be ASCII, without a laughter guard's first letter");
    if (!(t->face_index = PyMem_Calloc(t->n_faces ? t->n_faces : 1, sizeof(Py_ssize_t)))) { PyErr_NoMemory(); return -1; }
    Py_ssize_t at = 0;
    for (int c = 0; c < 128; c++) {  /* faces are in order, longest first, within each letter */
        t->face_by_first[c] = t->face_index + at;
        for (Py_ssize_t i = 0; i < t->n_faces; i++)
            if (t->faces[i].text[0] == (Py_UCS4)c) t->face_index[at + t->face_count[c]++] = i;
        if (t->face_count[c]) t->classes[c] |= K_FACE;
        at += t->face_count[c];
    }
    t->emoji_min = 0x110000;
    for (Py_ssize_t i = 0; i < t->n_emoji; i++)
        if (t->emoji[i].text[0] < t->emoji_min) t->emoji_min = t->emoji[i].text[0];
    for (Py_ssize_t i = 0; i < PyUnicode_GetLength(followers); i++) {
        Py_UCS4 c = PyUnicode_ReadChar(followers, i);
        if (c >= 128 || c == ' ') return bad_table("face_followers", "ASCII punctuation, please");
        t->face_follower[c] = 1;
    }
    return 0;
}

/* undecided strings (each with a character outside ASCII, its anchor) and re.I's case folds */
static int load_undecided_and_folds(PyObject *tables, Tables *t) {
    PyObject *undecided = table_item(tables, "undecided", &PyTuple_Type);
    PyObject *folds = table_item(tables, "case_folds", &PyDict_Type);
    if (!undecided || !folds) return -1;
    Py_ssize_t n = PyTuple_GET_SIZE(undecided);
    t->undecided = PyMem_Calloc(n ? n : 1, sizeof(Str));
    t->anchor = PyMem_Calloc(n ? n : 1, sizeof(Py_ssize_t));
    if (!t->undecided || !t->anchor) { PyErr_NoMemory(); return -1; }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (to_str(PyTuple_GET_ITEM(undecided, i), &t->undecided[i], "undecided") < 0) return -1;
        t->n_undecided = i + 1;
        Py_ssize_t a = 0;
        while (a < t->undecided[i].n && t->undecided[i].p[a] < 128) a++;
        if (a == t->undecided[i].n) return bad_table("undecided", "each with a character outside ASCII, please");
        t->anchor[i] = a;
    }
    Py_ssize_t pos = 0;
    PyObject *key, *value;
    while (PyDict_Next(folds, &pos, &key, &value)) {
        char letter[2];
        if (t->n_folds == MAX_FOLDS || !PyUnicode_Check(key) || PyUnicode_GetLength(key) != 1
            || PyUnicode_ReadChar(key, 0) < 128 || to_letters(value, letter, 2, "case_folds") < 0)
            return bad_table("case_folds", "a few characters outside ASCII -> a lowercase letter, please");
        t->fold_from[t->n_folds] = PyUnicode_ReadChar(key, 0);
        t->fold_to[t->n_folds++] = letter[0];
    }
    return 0;
}

/* the domain endings and the contractions (lowercase ASCII words) */
static int load_words(PyObject *tables, Tables *t) {
    PyObject *tlds = table_item(tables, "tlds", &PyTuple_Type);
    PyObject *contractions = table_item(tables, "contractions", &PyTuple_Type);
    if (!tlds || !contractions) return -1;
    Py_ssize_t n = PyTuple_GET_SIZE(tlds), m = PyTuple_GET_SIZE(contractions);
    t->tlds = PyMem_Calloc(n ? n : 1, 16);
    t->tld_len = PyMem_Calloc(n ? n : 1, sizeof(Py_ssize_t));
    t->contractions = PyMem_Calloc(m ? m : 1, sizeof(Contraction));
    if (!t->tlds || !t->tld_len || !t->contractions) { PyErr_NoMemory(); return -1; }
    for (; t->n_tlds < n; t->n_tlds++) {
        if (to_letters(PyTuple_GET_ITEM(tlds, t->n_tlds), t->tlds[t->n_tlds], 16, "tlds") < 0) return -1;
        t->tld_len[t->n_tlds] = (Py_ssize_t)strlen(t->tlds[t->n_tlds]);
    }
    for (; t->n_contractions < m; t->n_contractions++) {
        PyObject *item = PyTuple_GET_ITEM(contractions, t->n_contractions);
        Contraction *c = &t->contractions[t->n_contractions];
        if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) != 3)
            return bad_table("contractions", "(first, second, before_space) triples, please");
        if (to_letters(PyTuple_GET_ITEM(item, 0), c->a, sizeof c->a, "contractions") < 0
            || to_letters(PyTuple_GET_ITEM(item, 1), c->b, sizeof c->b, "contractions") < 0
            || (c->before_space = PyObject_IsTrue(PyTuple_GET_ITEM(item, 2))) < 0)
            return -1;
        t->contraction_first[(unsigned char)c->a[0]] = 1;
    }
    return 0;
}

/* ASCII punctuation (not " - , : or a digit; ' ` and the face followers may be) into classes */
static int ascii_class_of(PyObject *chars, unsigned short *classes, unsigned short k, unsigned char *flags, const char *name) {
    for (Py_ssize_t i = 0; i < PyUnicode_GetLength(chars); i++) {
        Py_UCS4 c = PyUnicode_ReadChar(chars, i);
        if (c >= 128 || c == '"' || c == '-' || c == ',' || c == ':' || is_word(c) || c < 32 || c == 127)
            return bad_table(name, "ASCII punctuation but \" - , :, please");
        if (classes) classes[c] |= k;
        if (flags) flags[c] = 1;
    }
    return 0;
}

/* DIGITS, the stand-ins, OPEN_QUOTE_AFTER and PUNCT_RUNS */
static int load_quotes_and_runs(PyObject *tables, Tables *t) {
    PyObject *digits = table_item(tables, "digits", &PyUnicode_Type), *stand_ins = table_item(tables, "stand_ins", &PyTuple_Type);
    PyObject *after = table_item(tables, "open_quote_after", &PyUnicode_Type);
    PyObject *runs = table_item(tables, "punct_runs", &PyUnicode_Type);
    if (!digits || !stand_ins || !after || !runs || to_letters(digits, t->digits, 7, "digits") < 0) return -1;
    Py_UCS4 in[2] = {0, 0};
    for (Py_ssize_t k = 0; k < 2 && PyTuple_GET_SIZE(stand_ins) == 2; k++) {
        PyObject *o = PyTuple_GET_ITEM(stand_ins, k);
        in[k] = PyUnicode_Check(o) && PyUnicode_GetLength(o) == 1 ? PyUnicode_ReadChar(o, 0) : 0;
    }
    if (in[0] < 128 || in[1] < 128 || in[0] == in[1] || is_word(in[0]) || is_word(in[1]) || is_space(in[0]) || is_space(in[1]))
        return bad_table("stand_ins", "two characters outside ASCII, neither a word character nor a space, please");
    t->open = in[0];
    t->close = in[1];
    for (Py_ssize_t i = 0; i < PyUnicode_GetLength(after); i++) {  /* (a space too) */
        Py_UCS4 c = PyUnicode_ReadChar(after, i);
        if (c >= 128 || is_word(c) || c == '"') return bad_table("open_quote_after", "ASCII but letters and \", please");
        t->open_after[c] = 1;
    }
    return ascii_class_of(runs, t->classes, K_BANG, NULL, "punct_runs");
}

/* TO_SPACE, WIDE and PAD: the character rules' classes */
static int load_characters(PyObject *tables, Tables *t) {
    PyObject *to_space = table_item(tables, "to_space", &PyUnicode_Type), *pad = table_item(tables, "pad", &PyUnicode_Type);
    PyObject *wide = table_item(tables, "wide", &PyDict_Type);
    if (!to_space || !pad || !wide || to_str(to_space, &t->to_space_wide, "to_space") < 0
        || load_quotes_and_runs(tables, t) < 0)
        return -1;
    Py_ssize_t k = 0;
    for (Py_ssize_t i = 0; i < t->to_space_wide.n; i++) {
        Py_UCS4 c = t->to_space_wide.p[i];
        if (c < 128) t->classes[c] |= K_TO_SPACE;
        else t->to_space_wide.p[k++] = c;
    }
    t->to_space_wide.n = k;
    t->special_max = 127;
    for (Py_ssize_t i = 0; i < k; i++)
        if (t->to_space_wide.p[i] > t->special_max) t->special_max = t->to_space_wide.p[i];
    if (ascii_class_of(pad, t->classes, K_PAD, NULL, "pad") < 0) return -1;
    Py_ssize_t n = PyDict_Size(wide), pos = 0;
    t->wide_from = PyMem_Calloc(n ? n : 1, sizeof(Py_UCS4));
    t->wide_to = PyMem_Calloc(n ? n : 1, sizeof(Str));
    if (!t->wide_from || !t->wide_to) { PyErr_NoMemory(); return -1; }
    PyObject *key, *value;
    while (PyDict_Next(wide, &pos, &key, &value)) {
        Str *to = &t->wide_to[t->n_wide];
        if (!PyUnicode_Check(key) || PyUnicode_GetLength(key) != 1 || PyUnicode_ReadChar(key, 0) < 128
            || to_str(value, to, "wide") < 0)
            return bad_table("wide", "a character outside ASCII -> ASCII, please");
        t->wide_from[t->n_wide++] = PyUnicode_ReadChar(key, 0);
        if (PyUnicode_ReadChar(key, 0) > t->special_max) t->special_max = PyUnicode_ReadChar(key, 0);
        if (to->n > 6) return bad_table("wide", "replacements of 6 characters at most, please");
        for (Py_ssize_t i = 0; i < to->n; i++)
            if (to->p[i] >= 128 || to->p[i] < 32 || is_decimal(to->p[i])) return bad_table("wide", "printable ASCII, no digits, please");
    }
    return 0;
}

static int valid_cause(int cause) { return cause == 1 || cause == 2 || cause == 4 || cause == 8; }

/* the triggers (by their last character) and the line rules */
static int load_triggers(PyObject *tables, Tables *t) {
    PyObject *triggers = table_item(tables, "triggers", &PyTuple_Type);
    PyObject *rules = table_item(tables, "line_rules", &PyTuple_Type);
    if (!triggers || !rules) return -1;
    Py_ssize_t n = PyTuple_GET_SIZE(triggers), m = PyTuple_GET_SIZE(rules);
    t->triggers = PyMem_Calloc(n ? n : 1, sizeof(Trigger));
    t->line_rules = PyMem_Calloc(m ? m : 1, sizeof(LineRule));
    if (!t->triggers || !t->line_rules) { PyErr_NoMemory(); return -1; }
    for (Py_ssize_t index = 0; index < n; index++) {
        PyObject *item = PyTuple_GET_ITEM(triggers, index);
        Trigger *g = &t->triggers[index];
        t->n_triggers = index + 1;  /* (freed from here on, whatever fails) */
        if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) != 2 || !PyLong_Check(PyTuple_GET_ITEM(item, 1)))
            return bad_table("triggers", "(string, cause) pairs, please");
        g->cause = (int)PyLong_AsLong(PyTuple_GET_ITEM(item, 1));
        if (to_str(PyTuple_GET_ITEM(item, 0), &g->text, "triggers") < 0) return -1;
        if (!valid_cause(g->cause)) return bad_table("triggers", "a cause of 1, 2, 4 or 8, please");
        Py_UCS4 last = g->text.p[g->text.n - 1];
        if (last >= 128) return bad_table("triggers", "ending in an ASCII character, please");
        t->classes[last] |= K_REFUSE;
        if (is_letter(last)) t->classes[last ^ 32] |= K_REFUSE;  /* (matched as re.I would) */
        t->n_by_last[fold(last)]++;
    }
    if (!(t->trigger_index = PyMem_Calloc(n ? n : 1, sizeof(Py_ssize_t)))) { PyErr_NoMemory(); return -1; }
    Py_ssize_t at = 0;
    for (int c = 0; c < 128; c++) {
        t->by_last[c] = t->trigger_index + at;
        for (Py_ssize_t k = 0, j = 0; k < n; k++)
            if (fold(t->triggers[k].text.p[t->triggers[k].text.n - 1]) == (Py_UCS4)c) t->by_last[c][j++] = k;
        at += t->n_by_last[c];
    }
    for (Py_ssize_t index = 0; index < m; index++) {
        PyObject *item = PyTuple_GET_ITEM(rules, index);
        LineRule *r = &t->line_rules[index];
        t->n_line_rules = index + 1;
        if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) != 5 || !PyCallable_Check(PyTuple_GET_ITEM(item, 3)))
            return bad_table("line_rules", "(first characters, digits, anything, match, cause), please");
        Py_INCREF(r->match = PyTuple_GET_ITEM(item, 3));
        r->cause = (int)PyLong_AsLong(PyTuple_GET_ITEM(item, 4));
        if ((r->digits = PyObject_IsTrue(PyTuple_GET_ITEM(item, 1))) < 0
            || (r->anything = PyObject_IsTrue(PyTuple_GET_ITEM(item, 2))) < 0 || PyErr_Occurred())
            return -1;
        if (!valid_cause(r->cause)) return bad_table("line_rules", "a cause of 1, 2, 4 or 8, please");
        if (to_str(PyTuple_GET_ITEM(item, 0), &r->wide, "line_rules") < 0) return -1;
        Py_ssize_t k = 0;
        for (Py_ssize_t i = 0; i < r->wide.n; i++) {
            if (r->wide.p[i] < 128) r->ascii[r->wide.p[i]] = t->line_start[r->wide.p[i]] = 1;
            else r->wide.p[k++] = r->wide.p[i];
        }
        for (int c = 0; c < 128; c++) t->line_start[c] |= r->anything || (r->digits && c >= '0' && c <= '9');
        r->wide.n = k;
    }
    for (int c = 0; c < 128; c++)  /* strip_markup's whitespace guard: not text.isprintable() */
        if (c != '\n' && !Py_UNICODE_ISPRINTABLE(c)) t->classes[c] |= K_REFUSE;
    t->classes['.'] |= K_REFUSE;  /* (a domain ending) */
    return 0;
}

static PyObject *configure(PyObject *self, PyObject *args) {
    PyObject *tables;
    if (!PyArg_ParseTuple(args, "O!", &PyDict_Type, &tables)) return NULL;
    Tables t;
    memset(&t, 0, sizeof t);
    if (load_undecided_and_folds(tables, &t) < 0 || load_emoticons(tables, &t) < 0 || load_words(tables, &t) < 0
        || load_characters(tables, &t) < 0 || load_triggers(tables, &t) < 0) {
        free_tables(&t);
        return NULL;
    }
    free_tables(&T);
    T = t;
    T.ready = 1;
    for (int c = 0; c < 128; c++)
        ascii_class[c] = (ascii_class[c] & ~(K_FACE | K_REFUSE | K_TO_SPACE | K_PAD | K_BANG | K_LAUGH)) | T.classes[c];
    n_folds = T.n_folds;
    memcpy(fold_from, T.fold_from, sizeof fold_from);
    memcpy(fold_to, T.fold_to, sizeof fold_to);
    Py_RETURN_NONE;
}

static int starts_with(const Buf *b, Py_ssize_t i, const Entry *e) {
    if (i + e->len > b->n) return 0;
    for (Py_ssize_t j = 0; j < e->len; j++)
        if (b->p[i + j] != e->text[j]) return 0;
    return 1;
}

static int put_word(Buf *out, const char *word) {
    return buf_put(out, ' ') < 0 || buf_puts(out, word) < 0 || buf_put(out, ' ') < 0 ? -1 : 0;
}

/* --- step 3: emoticons.substitute_emoticons ----------------------------------------------- */
/* faces.sub: a face stands alone ((?<!\S.) after its first character: the start or whitespace
   before it) and is followed by whitespace, the end or one of FACE_FOLLOWERS (its longest
   fitting entry) */
static const Entry *face_at(const Buf *in, Py_ssize_t i) {
    Py_UCS4 first = in->p[i];
    if (first >= 128 || !T.face_count[first] || (i > 0 && !is_space(in->p[i - 1]))) return NULL;
    for (Py_ssize_t k = 0; k < T.face_count[first]; k++) {
        const Entry *face = &T.faces[T.face_by_first[first][k]];
        if (!starts_with(in, i, face)) continue;
        Py_ssize_t e = i + face->len;
        Py_UCS4 c = e < in->n ? in->p[e] : 0;
        if (e == in->n || is_space(c) || (c < 128 && T.face_follower[c])) return face;
    }
    return NULL;
}

/* _emoji_sub's match: the longest emoji at i (they may start anywhere) */
static const Entry *emoji_at(const Buf *in, Py_ssize_t i) {
    if (in->p[i] < T.emoji_min) return NULL;
    for (Py_ssize_t k = 0; k < T.n_emoji; k++)
        if (starts_with(in, i, &T.emoji[k])) return &T.emoji[k];
    return NULL;
}

/* faces.sub or _emoji_sub (at: face_at or emoji_at): leftmost matches, each " word " */
static int substitute(const Buf *in, Buf *out, const Entry *(*at)(const Buf *, Py_ssize_t)) {
    Py_ssize_t i = 0;
    while (i < in->n) {
        const Entry *found = at(in, i);
        if (found) {
            if (put_word(out, found->word) < 0) return -1;
            i += found->len;
        } else if (buf_put(out, in->p[i++]) < 0) {
            return -1;
        }
    }
    return 0;
}

/* --- step 4: cleaning.shorten_elongated ---------------------------------------------------- */
/* _REPEAT.sub(r"\1\1"): a run of 3 or more of one ASCII letter keeps two. (_REPEAT_PUNCT, a
   run of 4 or more of ! ? or . keeps three, is left to characters(): the ! and ? runs keep two
   there and periods become spaces, so the tokens are the same.) */
static int shorten_letters(const Buf *in, Buf *out) {
    if (buf_grow(out, in->n) < 0) return -1;
    for (Py_ssize_t i = 0; i < in->n; i++) {
        Py_UCS4 c = in->p[i];
        if (i >= 2 && is_letter(c) && in->p[i - 1] == c && in->p[i - 2] == c) continue;
        out->p[out->n++] = c;
    }
    return 0;
}

/* The laughter guards (LAUGH_GUARDS, on text.lower(): ASCII folding, as configure() checked)
   that start at b->p[i], a bit each */
static int laugh_bits_at(const Buf *b, Py_ssize_t i) {
    Py_UCS4 c = fold(b->p[i]), next = i + 1 < b->n ? fold(b->p[i + 1]) : 0;
    unsigned candidates = c < 128 && next < 128 ? T.laugh_first[c] & T.laugh_second[next] : 0;
    int seen = 0;
    for (int k = 0; candidates >> k; k++) {
        const Str *g = &T.laugh[k];
        if (!(candidates >> k & 1) || i + g->n > b->n) continue;
        Py_ssize_t j = 2;
        while (j < g->n && fold(b->p[i + j]) == g->p[j]) j++;
        if (j == g->n) seen |= 1 << k;
    }
    return seen;
}

/* 1: the _AH_WORD pass runs ("ahha" alone stays), 2: _LAUGH_HE, 4: _LAUGH_LOL (a string of
   each of the pass's groups is there) */
static int laugh_passes(int seen) {
    int passes = 0;
    for (int p = 0; p < 3; p++) {
        int all = 1;
        for (int g = 0; g < T.laugh_groups[p]; g++) all &= (seen & T.laugh_mask[p][g]) != 0;
        passes |= all << p;
    }
    return passes;
}

static int may_laugh(const Buf *b) {
    int seen = 0;
    for (Py_ssize_t i = 0; i < b->n; i++)
        if (b->p[i] < 128 && (ascii_class[b->p[i]] & K_LAUGH)) seen |= laugh_bits_at(b, i);
    return laugh_passes(seen);
}

/* _LAUGH_HA.fullmatch on a word of a and h (folded): [ah]?(?:ha|ah){2,}[ah]? */
static int laugh_ha(const Py_UCS4 *w, Py_ssize_t n) {
    for (int lead = 0; lead <= 1; lead++)
        for (int trail = 0; trail <= 1; trail++) {
            Py_ssize_t k = n - lead - trail, j;
            if (k < 4 || k % 2) continue;
            for (j = lead; j < lead + k; j += 2)
                if (fold(w[j]) == fold(w[j + 1])) break;  /* a pair of a and h is ha or ah when they differ */
            if (j == lead + k) return 1;
        }
    return 0;
}

/* out gets word (a LAUGH_WORDS entry) with room left for the rest of the input (from i) */
static int put_laugh(Buf *out, const Str *word, const Buf *in, Py_ssize_t i) {
    if (buf_grow(out, word->n + in->n - i) < 0) return -1;
    memcpy(out->p + out->n, word->p, sizeof(Py_UCS4) * word->n);
    out->n += word->n;
    return 0;
}

/* _AH_WORD.sub(_laugh_ha): a whole word of 4 or more a and h (re.I) that _LAUGH_HA matches -> LAUGH_WORDS[0] */
static int laugh_words(const Buf *in, Buf *out) {
    if (buf_grow(out, in->n) < 0) return -1;
    for (Py_ssize_t i = 0; i < in->n;) {
        Py_UCS4 c = fold(in->p[i]);
        if ((c == 'a' || c == 'h') && (i == 0 || !is_word(in->p[i - 1]))) {
            Py_ssize_t j = i;
            while (j < in->n && (fold(in->p[j]) == 'a' || fold(in->p[j]) == 'h')) j++;
            int whole = j - i >= 4 && (j == in->n || !is_word(in->p[j]));
            if (whole && laugh_ha(in->p + i, j - i)) {
                if (put_laugh(out, &T.laugh_word[0], in, j) < 0) return -1;
            } else {
                memcpy(out->p + out->n, in->p + i, sizeof(Py_UCS4) * (j - i));
                out->n += j - i;
            }
            i = j;
        } else {
            out->p[out->n++] = in->p[i++];
        }
    }
    return 0;
}

/* _LAUGH_HE.sub(LAUGH_WORDS[1]) (\b(?:he){2,}h?\b) or _LAUGH_LOL.sub(LAUGH_WORDS[2]) (\bl(?:ol){2,}\b), re.I:
   from a word start, the most pairs that leave a word end (re's backtracking order) */
static Py_ssize_t laugh_at(const Buf *in, Py_ssize_t i, int lol) {
    if (fold(in->p[i]) != (lol ? 'l' : 'h') || (i > 0 && is_word(in->p[i - 1]))) return 0;
    Py_ssize_t start = i + lol, k = 0;
    const char a = lol ? 'o' : 'h', b = lol ? 'l' : 'e';
    while (start + 2 * k + 1 < in->n && fold(in->p[start + 2 * k]) == (Py_UCS4)a && fold(in->p[start + 2 * k + 1]) == (Py_UCS4)b)
        k++;
    for (; k >= 2; k--) {
        Py_ssize_t e = start + 2 * k;
        if (!lol && e < in->n && fold(in->p[e]) == 'h' && (e + 1 == in->n || !is_word(in->p[e + 1]))) return e + 1 - i;
        if (e == in->n || !is_word(in->p[e])) return e - i;
    }
    return 0;
}

static int laugh_runs(const Buf *in, Buf *out, int lol) {
    if (buf_grow(out, in->n) < 0) return -1;
    for (Py_ssize_t i = 0; i < in->n;) {
        Py_ssize_t len = laugh_at(in, i, lol);
        if (len) {
            if (put_laugh(out, &T.laugh_word[1 + lol], in, i + len) < 0) return -1;
            i += len;
        } else {
            out->p[out->n++] = in->p[i++];
        }
    }
    return 0;
}

/* what the text holds, to skip the steps that would not change it */
typedef struct {
    int undecided, nonascii, emoji, face, triple, quotes2, laugh_seen;
} Scan;

static inline void scan_at(const Buf *b, Py_ssize_t i, Scan *s) {
    Py_UCS4 c = b->p[i];
    if (c < 128) {
        if (i >= 2 && b->p[i - 1] == c && b->p[i - 2] == c && is_letter(c)) s->triple = 1;
        unsigned k = ascii_class[c];
        if (!(k & (K_FACE | K_LAUGH | K_QUOTE2))) return;
        if ((k & K_FACE) && !s->face && (i == 0 || is_space(b->p[i - 1])) && face_at(b, i)) s->face = 1;
        if ((k & K_QUOTE2) && i >= 1 && b->p[i - 1] == c) s->quotes2 = 1;
        if (k & K_LAUGH) {  /* (laugh_bits_at where a guard starts with these two letters) */
            Py_UCS4 next = i + 1 < b->n ? fold(b->p[i + 1]) : 0;
            if (next < 128 && (T.laugh_first[fold(c)] & T.laugh_second[next])) s->laugh_seen |= laugh_bits_at(b, i);
        }
        return;
    }
    s->nonascii = 1;
    if (c >= T.emoji_min) s->emoji = 1;
    for (Py_ssize_t k = 0; k < T.n_undecided; k++) {  /* (the shrug rule) */
        const Str *u = &T.undecided[k];
        Py_ssize_t start = i - T.anchor[k], j = 0;
        if (c != u->p[T.anchor[k]] || start < 0 || start + u->n > b->n) continue;
        while (j < u->n && b->p[start + j] == u->p[j]) j++;
        if (j == u->n) s->undecided = 1;
    }
}

static void scan(const Buf *b, Scan *s) {
    memset(s, 0, sizeof *s);
    for (Py_ssize_t i = 0; i < b->n; i++) scan_at(b, i, s);
}

/* text.lower() of a text with a character outside ASCII (characters() lowercases ASCII text):
   each character's full lowercase mapping, as str.lower takes it, where it is one character;
   str.lower itself where one is not, or where a capital sigma's depends on its neighbours */
static int lower(Buf *b, Buf *spare) {
#if PY_VERSION_HEX < 0x030C0000  /* (a private function of CPython's, the one str.lower calls) */
    spare->n = 0;
    if (buf_grow(spare, b->n) < 0) return -1;
    Py_ssize_t i = 0;
    for (; i < b->n; i++) {
        Py_UCS4 c = b->p[i], mapped[3];
        if (c < 128) { spare->p[i] = c >= 'A' && c <= 'Z' ? c + 32 : c; continue; }
        if (c == 0x3A3 || _PyUnicode_ToLowerFull(c, mapped) != 1) break;
        spare->p[i] = mapped[0];
    }
    if (i == b->n) {
        spare->n = i;
        buf_swap(b, spare);
        return 0;
    }
#endif
    PyObject *s = PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, b->p, b->n);
    if (!s) return -1;
    PyObject *low = PyObject_CallMethod(s, "lower", NULL);
    Py_DECREF(s);
    if (!low) return -1;
    Py_ssize_t n = PyUnicode_GetLength(low);
    spare->n = 0;
    if (buf_grow(spare, n) < 0 || !PyUnicode_AsUCS4(low, spare->p, spare->cap, 0)) { Py_DECREF(low); return -1; }
    spare->n = n;
    Py_DECREF(low);
    buf_swap(b, spare);
    return 0;
}

/* --- the lsdscc character rules: cleaning.lsdscc_characters -------------------------------- */

/* _protect_quotes: '' -> " CLOSE ", then `` -> " OPEN " (str.replace, left to right) */
static int protect(const Buf *in, Buf *out, Py_UCS4 quote, Py_UCS4 stand_in) {
    if (buf_grow(out, 2 * in->n) < 0) return -1;
    for (Py_ssize_t i = 0; i < in->n; i++) {
        if (in->p[i] == quote && i + 1 < in->n && in->p[i + 1] == quote) {
            out->p[out->n++] = ' ';
            out->p[out->n++] = stand_in;
            out->p[out->n++] = ' ';
            i++;
        } else {
            out->p[out->n++] = in->p[i];
        }
    }
    return 0;
}

/* a character of TO_SPACE */
static inline int to_space(Py_UCS4 c) {
    if (c < 128) return ascii_class[c] & K_TO_SPACE;
    for (Py_ssize_t k = 0; k < T.to_space_wide.n; k++)
        if (T.to_space_wide.p[k] == c) return 1;
    return 0;
}

/* WIDE's replacement of c (outside ASCII), or NULL */
static const Str *wide_to(Py_UCS4 c) {
    if (c < 128) return NULL;
    for (Py_ssize_t k = 0; k < T.n_wide; k++)
        if (T.wide_from[k] == c) return &T.wide_to[k];
    return NULL;
}

/* c at o[n] (the new n), noting a " (*quotes) and , or : after one of them (*touching) */
static inline Py_ssize_t put_character(Py_UCS4 *o, Py_ssize_t n, Py_UCS4 c, int *quotes, int *touching) {
    if (c == '"') *quotes = 1;
    else if ((c == ',' || c == ':') && n && (o[n - 1] == ',' || o[n - 1] == ':')) *touching = 1;
    o[n] = c;
    return n + 1;
}

/* digit runs (\d: Unicode decimals) -> digits; runs of 3 or more ! or ? keep two; WIDE's
   characters -> their replacements; TO_SPACE's characters (also in those) -> spaces. Sets *quotes when the
   result has a ", *touching when it has ,, ,: :, or :: (NLTK's colon-comma rule); with
   lower_ascii (an ASCII text to lowercase) A-Z become a-z */
static int characters(const Buf *in, Buf *out, int lower_ascii, int *quotes, int *touching) {
    if (buf_grow(out, 6 * in->n) < 0) return -1;
    Py_UCS4 *o = out->p;
    Py_ssize_t n = 0;
    const unsigned attention = K_DIGIT | K_BANG | K_TO_SPACE | K_QUOTE | K_COLON_COMMA | (lower_ascii ? K_UPPER : 0);
    for (Py_ssize_t i = 0; i < in->n;) {
        Py_UCS4 c = in->p[i];
        if (c < 128 && !(ascii_class[c] & attention)) {
            o[n++] = c;
            i++;
            continue;
        }
        if (is_decimal(c)) {
            while (i < in->n && is_decimal(in->p[i])) i++;
            for (const char *d = T.digits; *d; d++) o[n++] = (unsigned char)*d;
            continue;
        }
        if (c < 128 && (ascii_class[c] & K_BANG) && i + 2 < in->n && in->p[i + 1] == c && in->p[i + 2] == c) {
            while (i < in->n && in->p[i] == c) i++;
            o[n++] = c;
            o[n++] = c;
            continue;
        }
        i++;
        const Str *wide = c > T.special_max ? NULL : wide_to(c);
        if (wide) {  /* (a replacement: 6 characters at most, ASCII, no digits) */
            for (Py_ssize_t k = 0; k < wide->n; k++) n = put_character(o, n, to_space(wide->p[k]) ? ' ' : wide->p[k], quotes, touching);
            continue;
        }
        if (lower_ascii && c >= 'A' && c <= 'Z') c += 32;
        else if (c <= T.special_max && to_space(c)) c = ' ';
        n = put_character(o, n, c, quotes, touching);
    }
    out->n = n;
    return 0;
}

/* --- the Treebank rules left for lsdscc text (the end of cleaning.lsdscc_tail) ------------- */
/* a text starting with " starts with " OPEN "; then _OPEN_QUOTE: a " after one of
   OPEN_QUOTE_AFTER (in the text before this substitution) is OPEN */
static int open_quotes(const Buf *in, Buf *out) {
    Py_ssize_t start = in->n && in->p[0] == '"';
    if (buf_grow(out, in->n + 3) < 0) return -1;
    if (start) {
        out->p[out->n++] = ' ';
        out->p[out->n++] = T.open;
        out->p[out->n++] = ' ';
    }
    if (buf_putu(out, in->p + start, in->n - start) < 0) return -1;
    for (Py_ssize_t i = out->n - 1; i > 0; i--) {  /* backwards: p[i - 1] is still the old text */
        Py_UCS4 before = out->p[i - 1];
        if (out->p[i] == '"' && before < 128 && T.open_after[before]) out->p[i] = T.open;
    }
    return 0;
}

/* _COLON_COMMA.sub(r" \1 \2"): a : or , followed by a non-digit (taken with it) or the end */
static int colon_comma(const Buf *in, Buf *out) {
    if (buf_grow(out, 3 * in->n) < 0) return -1;
    for (Py_ssize_t i = 0; i < in->n; i++) {
        Py_UCS4 c = in->p[i];
        if ((c == ':' || c == ',') && (i + 1 == in->n || !is_decimal(in->p[i + 1]))) {
            out->p[out->n++] = ' ';
            out->p[out->n++] = c;
            out->p[out->n++] = ' ';
            if (i + 1 < in->n) out->p[out->n++] = in->p[++i];
        } else {
            out->p[out->n++] = c;
        }
    }
    return 0;
}

/* " ".join(_PAD.split(text)) (a space either side of each padded character), then
   " -> " '' ", OPEN -> " `` ", CLOSE -> " '' ", -- -> " -- " (each touches characters
   the others leave alone, so one pass does all) */
static int pad(const Buf *in, Buf *out, int colon_comma) {
    if (buf_grow(out, 4 * in->n) < 0) return -1;
    Py_UCS4 *o = out->p;
    Py_ssize_t n = 0;
    const unsigned attention = K_QUOTE | K_DASH | K_PAD | (colon_comma ? K_COLON_COMMA : 0);
    for (Py_ssize_t i = 0; i < in->n; i++) {
        Py_UCS4 c = in->p[i];
        if (c < 128 && !(ascii_class[c] & attention)) {
            o[n++] = c;
            continue;
        }
        if (c < 128) {
            if (c == '-' && !(i + 1 < in->n && in->p[i + 1] == '-')) {
                o[n++] = c;
                continue;
            }
            o[n++] = ' ';
            if (c == '"') { o[n++] = '\''; o[n++] = '\''; }
            else if (c == '-') { o[n++] = '-'; o[n++] = '-'; i++; }
            else o[n++] = c;
            o[n++] = ' ';
        } else if (c == T.open || c == T.close) {
            o[n++] = ' ';
            o[n++] = c == T.open ? '`' : '\'';
            o[n++] = c == T.open ? '`' : '\'';
            o[n++] = ' ';
        } else {
            o[n++] = c;
        }
    }
    out->n = n;
    return 0;
}

/* _CONTRACTION.sub(_CONTRACTION_SPLIT): (?i)\b(can)(not)\b ... |\b(wan)(na)(?=\s|$) ->
   " can not " (case kept): CONTRACTIONS where a word ends, CONTRACTIONS_BEFORE_SPACE where a
   space or the end follows, tried in their order, matched as re.I matches (fold_match) */
static Py_ssize_t contraction_at(const Buf *in, Py_ssize_t i, Py_ssize_t *first) {
    Py_UCS4 c = fold_re(in->p[i]);
    if (c >= 128 || !T.contraction_first[c] || (i > 0 && is_word(in->p[i - 1]))) return 0;
    for (Py_ssize_t k = 0; k < T.n_contractions; k++) {
        const Contraction *t = &T.contractions[k];
        if ((unsigned char)t->a[0] != c) continue;
        Py_ssize_t la = (Py_ssize_t)strlen(t->a), end = i + la + (Py_ssize_t)strlen(t->b);
        if (!fold_match(in, i, t->a) || !fold_match(in, i + la, t->b)) continue;
        if (end == in->n || (t->before_space ? is_space(in->p[end]) : !is_word(in->p[end]))) {
            *first = la;
            return end - i;
        }
    }
    return 0;
}

static PyObject *new_token(const Py_UCS4 *p, Py_ssize_t n) {
    Py_UCS4 max = 0;
    for (Py_ssize_t i = 0; i < n; i++) max |= p[i];
    if (max >= 128) return PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, p, n);
    PyObject *t = PyUnicode_New(n, 127);  /* (most tokens) */
    if (t) {
        Py_UCS1 *d = PyUnicode_1BYTE_DATA(t);
        for (Py_ssize_t i = 0; i < n; i++) d[i] = (Py_UCS1)p[i];
    }
    return t;
}

/* Tokens seen before, one str each (up to INTERN_MAX of them): a token counted again takes no
   new str, and the counts' dict finds it by its cached hash and by identity. A slot is one
   cache line: an ASCII token of up to HEAD characters is also in head, so finding it reads
   the slot alone, not the str. */
#define HEAD 24
typedef struct {
    Py_hash_t h;
    PyObject *s;
    unsigned long generation;  /* kept_set's generation when kept was found (0: never) */
    long pending;              /* its count in the text being split, not yet in the counts */
    int kept;                  /* the token is in kept_set */
    int head_n;                /* the token's length where head holds it (ASCII, HEAD at most), else -1 */
    unsigned char head[HEAD];
} Slot;
/* apply_vocabulary's last set of unchanged tokens (held, so no other set takes its address) */
static PyObject *kept_set;
static unsigned long kept_generation;
static Slot *interned;
static void *interned_block;  /* (what PyMem_Calloc gave: interned is its first 64-byte boundary) */
static Py_ssize_t interned_cap, interned_count;
static Py_ssize_t INTERN_MAX = 1 << 20;  /* (intern_limit() changes it, for tests) */

/* FNV-1a over the code points of characters 0..n of a str's data (kind: its width) */
#define FNV_START 14695981039346656037ULL
#define FNV_STEP(h, c) (((h) ^ (c)) * 1099511628211ULL)
static Py_hash_t text_hash(int kind, const void *data, Py_ssize_t n) {
    Py_uhash_t h = FNV_START;
    for (Py_ssize_t i = 0; i < n; i++) h = FNV_STEP(h, PyUnicode_READ(kind, data, i));
    return (Py_hash_t)h;
}

/* whether the str s holds the n characters of data (of width kind) */
static int same_text(PyObject *s, int kind, const void *data, Py_ssize_t n) {
    if (PyUnicode_GET_LENGTH(s) != n) return 0;
    int skind = PyUnicode_KIND(s);
    const void *sdata = PyUnicode_DATA(s);
    if (skind == kind) return !memcmp(sdata, data, n * kind);
    for (Py_ssize_t i = 0; i < n; i++)
        if (PyUnicode_READ(skind, sdata, i) != PyUnicode_READ(kind, data, i)) return 0;
    return 1;
}

/* whether slot holds the token of the n characters of data (of width kind) */
static inline int same_token(const Slot *slot, int kind, const void *data, Py_ssize_t n) {
    if (slot->head_n < 0) return same_text(slot->s, kind, data, n);
    if (slot->head_n != n) return 0;
    if (kind == PyUnicode_4BYTE_KIND) {  /* (a token of the cleaning, most often) */
        const Py_UCS4 *p = data;
        for (Py_ssize_t i = 0; i < n; i++)
            if (slot->head[i] != p[i]) return 0;
        return 1;
    }
    if (kind == PyUnicode_1BYTE_KIND) return !memcmp(slot->head, data, n);
    for (Py_ssize_t i = 0; i < n; i++)
        if (slot->head[i] != PyUnicode_READ(kind, data, i)) return 0;
    return 1;
}

static int intern_grow(void) {
    Py_ssize_t cap = interned_cap ? 2 * interned_cap : 1 << 14;
    void *block = PyMem_Calloc(cap + 1, sizeof(Slot));
    if (!block) { PyErr_NoMemory(); return -1; }
    Slot *t = (Slot *)(((uintptr_t)block + 63) & ~(uintptr_t)63);
    for (Py_ssize_t i = 0; i < interned_cap; i++) {
        if (!interned[i].s) continue;
        Py_ssize_t j = interned[i].h & (cap - 1);
        while (t[j].s) j = (j + 1) & (cap - 1);
        t[j] = interned[i];
    }
    PyMem_Free(interned_block);
    interned_block = block;
    interned = t;
    interned_cap = cap;
    return 0;
}

/* the slot of the interned token of the n characters of data (of width kind), or the empty
   slot where it would go (h: their text_hash; the table has room) */
static Slot *find_slot(int kind, const void *data, Py_ssize_t n, Py_hash_t h) {
    Py_ssize_t j = h & (interned_cap - 1);
    while (interned[j].s && !(interned[j].h == h && same_token(&interned[j], kind, data, n)))
        j = (j + 1) & (interned_cap - 1);
    return &interned[j];
}

/* the slot of the interned token of characters i..i+n of a str's data (NULL: not interned) */
static Slot *interned_slice(int kind, const void *data, Py_ssize_t i, Py_ssize_t n) {
    if (!interned_cap) return NULL;
    const void *at = (const char *)data + i * kind;
    Slot *slot = find_slot(kind, at, n, text_hash(kind, at, n));
    return slot->s ? slot : NULL;
}

/* whether slot's token is in the set `unchanged` (found once per set and token) */
static int slot_kept(Slot *slot, PyObject *unchanged) {
    if (unchanged != kept_set) {
        Py_INCREF(unchanged);
        Py_XSETREF(kept_set, unchanged);
        kept_generation++;
    }
    if (slot->generation != kept_generation) {
        int in = PySet_Contains(unchanged, slot->s);
        if (in < 0) return -1;
        slot->kept = in;
        slot->generation = kept_generation;
    }
    return slot->kept;
}

static int intern_will_grow(void) {
    return 2 * (interned_count + 1) > interned_cap && interned_count < INTERN_MAX;
}

/* the slot of a token of the cleaning (h: its text_hash), its str made and interned where it is
   new (*slot: NULL, and *made the new str, once the table is full); -1 with the error set */
static int token_slot(const Py_UCS4 *p, Py_ssize_t n, Py_hash_t h, Slot **slot, PyObject **made) {
    *slot = NULL;
    *made = NULL;
    if (intern_will_grow() && intern_grow() < 0) return -1;
    Slot *found = find_slot(PyUnicode_4BYTE_KIND, p, n, h);
    if (found->s) {
        *slot = found;
        return 0;
    }
    PyObject *t = new_token(p, n);
    if (!t) return -1;
    if (interned_count >= INTERN_MAX) {
        *made = t;
        return 0;
    }
    *found = (Slot){h, t, 0, 0, 0, -1, {0}};
    if (n <= HEAD && PyUnicode_KIND(t) == PyUnicode_1BYTE_KIND && PyUnicode_IS_ASCII(t)) {
        found->head_n = (int)n;
        memcpy(found->head, PyUnicode_1BYTE_DATA(t), n);
    }
    *slot = found;
    interned_count++;
    return 0;
}

/* A text's interned tokens are counted among themselves first (pending, in the order they first
   come), then into counts, as Counter.update would insert and count them: at the end of the text,
   or (defer_counts) at the end of several texts, in the order they first came in those. */
typedef struct {
    Slot **slots;
    Py_ssize_t n, cap;
    unsigned long flushes;  /* (how often they were written or dropped) */
} Pending;

/* where the tokens go: a list, or (counts given) counted into counts (q: their pending counts)
   and joined with single spaces */
typedef struct {
    PyObject *list, *counts;
    Buf joined;
    Pending *q;
} Sink;

static int count_token(PyObject *counts, PyObject *t, long amount) {
    PyObject *v = PyDict_GetItemWithError(counts, t);
    long c = 0;
    if (v) {
        c = PyLong_AsLong(v);
        if (c == -1 && PyErr_Occurred()) return -1;
    } else if (PyErr_Occurred()) {
        return -1;
    }
    PyObject *next = PyLong_FromLong(c + amount);
    if (!next) return -1;
    int r = PyDict_SetItem(counts, t, next);
    Py_DECREF(next);
    return r;
}

/* the pending counts q into counts (ok: 0 on an error, which drops them) */
static int flush_counts_into(Pending *q, PyObject *counts, int ok) {
    for (Py_ssize_t i = 0; i < q->n; i++) {
        Slot *slot = q->slots[i];
        if (i + 4 < q->n) PREFETCH(q->slots[i + 4]->s);  /* (the dict reads its type and hash) */
        if (ok && count_token(counts, slot->s, slot->pending) < 0) ok = 0;
        slot->pending = 0;
    }
    q->n = 0;
    q->flushes++;
    return ok ? 0 : -1;
}

static int flush_pending(Sink *k, int ok) { return flush_counts_into(k->q, k->counts, ok); }

static int count_pending(Sink *k, const Py_UCS4 *p, Py_ssize_t n, Py_hash_t h) {
    if (intern_will_grow() && flush_pending(k, 1) < 0) return -1;  /* (a new table moves the slots) */
    Slot *slot;
    PyObject *t;
    if (token_slot(p, n, h, &slot, &t) < 0) return -1;
    if (!slot) {  /* (the table is full: counted at once, after the pending ones) */
        int r = flush_pending(k, 1) < 0 || count_token(k->counts, t, 1) < 0 ? -1 : 0;
        Py_DECREF(t);
        return r;
    }
    if (!slot->pending++) {
        PREFETCH(slot->s);  /* (flush_pending's dict reads its type and hash) */
        Pending *q = k->q;
        if (q->n == q->cap) {
            Py_ssize_t cap = q->cap ? 2 * q->cap : 64;
            Slot **grown = PyMem_Realloc(q->slots, cap * sizeof(Slot *));
            if (!grown) { slot->pending--; PyErr_NoMemory(); return -1; }
            q->slots = grown;
            q->cap = cap;
        }
        q->slots[q->n++] = slot;
    }
    return 0;
}

/* The deferred counts (defer_counts): the pending counts of the texts split since it was called
   with `deferred`, written into it by flush_counts, defer_counts, an error, a new table, a full
   one or a split into other counts (NULL: none deferred). */
static PyObject *deferred;
static Pending held;

/* the held counts into `deferred` (ok: 0 drops them), deferring into counts from then on (NULL: none) */
static int defer_into(PyObject *counts, int ok) {
    int r = deferred ? flush_counts_into(&held, deferred, ok) : 0;
    Py_XINCREF(counts);
    Py_XSETREF(deferred, counts);
    return r;
}

/* a token (h: its text_hash, where counts are given) */
static int emit(Sink *k, const Py_UCS4 *p, Py_ssize_t n, Py_hash_t h) {
    if (!k->counts) {
        PyObject *t = new_token(p, n);
        int r = !t ? -1 : PyList_Append(k->list, t);
        Py_XDECREF(t);
        return r;
    }
    if ((k->joined.n && buf_put(&k->joined, ' ') < 0) || buf_putu(&k->joined, p, n) < 0) return -1;
    return count_pending(k, p, n, h);  /* (last: where it fails, the token is not counted) */
}

/* the contractions split, then text.split(): a contraction's two parts are tokens of their
   own (the spaces it gets around and between them). The tokens, or (counts given) their text
   joined with single spaces, each counted into counts. */
/* a token of a text: where it starts, its length and text_hash */
typedef struct { Py_ssize_t start, n; Py_hash_t h; } Token;
/* the pending slots' array of the last split, kept for the next */
static Slot **spare_pending;
static Py_ssize_t spare_pending_cap;

static void give_pending(Pending *q) {
    if (q == &held) return;
    if (!spare_pending && q->cap <= POOL_KEEP) {
        spare_pending = q->slots;
        spare_pending_cap = q->cap;
    } else {
        PyMem_Free(q->slots);
    }
}

/* after an error at a text's token `failed` (v: its tokens): the counts its tokens from `from`
   on added to the pending ones taken away (those before `from` were written, as are those of
   the texts before it; mark: how many slots were pending when its token `from` came) */
static void undo_text(Pending *q, const Buf *b, const Token *v, Py_ssize_t from, Py_ssize_t failed, Py_ssize_t mark) {
    for (Py_ssize_t j = from; j < failed && interned_cap; j++) {
        Slot *slot = find_slot(PyUnicode_4BYTE_KIND, b->p + v[j].start, v[j].n, v[j].h);
        if (slot->s && slot->pending > 0) slot->pending--;
    }
    q->n = mark < q->n ? mark : q->n;
}

/* a contraction at b->p[i] where a word starts there (\b): its length (*first: its first part's), or 0 */
static inline Py_ssize_t contraction_start(const Buf *b, Py_ssize_t i, Py_UCS4 c, int after_word, Py_ssize_t *first) {
    if (after_word || (c < 128 && !T.contraction_first[fold(c)])) return 0;
    return contraction_at(b, i, first);
}

static Token *spare_tokens;  /* (the last split's array, kept for the next) */
static Py_ssize_t spare_tokens_cap;

/* the token at p[start:start+n] (h: its text_hash) into v[count]; its slot is fetched into the
   cache while the text is read further (a slot of a new table, where it grows, only misses) */
static inline Py_ssize_t add_token(Token *v, Py_ssize_t count, Py_ssize_t start, Py_ssize_t n, Py_uhash_t h) {
    v[count] = (Token){start, n, (Py_hash_t)h};
    if (interned_cap) PREFETCH(&interned[(Py_hash_t)h & (interned_cap - 1)]);
    return count + 1;
}

/* the tokens of b (the contractions split, then text.split()) into v (room for b->n of them): their count */
static Py_ssize_t find_tokens(const Buf *b, Token *v) {
    const Py_UCS4 *p = b->p;
    Py_ssize_t count = 0;
    for (Py_ssize_t i = 0, n = b->n; i < n;) {
        if (is_space(p[i])) { i++; continue; }
        Py_ssize_t start = i, first = 0, len = 0;  /* (the token being read starts at start) */
        Py_uhash_t h = FNV_START;  /* its text_hash so far */
        int after_word = i > 0 && is_word(p[i - 1]);
        for (; i < n; i++) {
            Py_UCS4 c = p[i];
            if (is_space(c) || (len = contraction_start(b, i, c, after_word, &first))) break;
            after_word = is_word(c);
            h = FNV_STEP(h, c);
        }
        if (i > start) count = add_token(v, count, start, i - start, h);
        if (len) {  /* (its two parts are tokens of their own) */
            count = add_token(v, count, i, first, text_hash(PyUnicode_4BYTE_KIND, p + i, first));
            count = add_token(v, count, i + first, len - first, text_hash(PyUnicode_4BYTE_KIND, p + i + first, len - first));
            i += len;
        }
    }
    return count;
}

static PyObject *split(const Buf *b, PyObject *counts) {
    Pending local = {spare_pending, 0, spare_pending_cap, 0};
    Sink k = {NULL, counts, {NULL, 0, 0}, counts && counts == deferred ? &held : &local};
    if (counts && deferred && counts != deferred && defer_into(deferred, 1) < 0) return NULL;  /* (other counts) */
    Token *v = spare_tokens;
    if (spare_tokens_cap < b->n + 1) {
        PyMem_Free(v);
        spare_tokens_cap = 0;
        if (!(v = spare_tokens = PyMem_Malloc((b->n + 1) * sizeof(Token)))) return PyErr_NoMemory();
        spare_tokens_cap = b->n + 1;
    }
    spare_tokens = NULL;  /* (taken: a split inside this one makes its own) */
    Py_ssize_t cap = spare_tokens_cap, count = find_tokens(b, v);
    spare_tokens_cap = 0;
    if (counts ? buf_take(&k.joined, b->n + 1) < 0 : !(k.list = PyList_New(0))) { PyMem_Free(v); return NULL; }
    if (k.q == &local) spare_pending = NULL, spare_pending_cap = 0;
    Py_ssize_t from = 0, mark = k.q->n, i = 0;  /* (undo_text's) */
    for (unsigned long flushes = k.q->flushes; i < count; i++) {
        int r = emit(&k, b->p + v[i].start, v[i].n, v[i].h);
        if (k.q->flushes != flushes) flushes = k.q->flushes, from = i, mark = 0;
        if (r < 0) goto error;
    }
    if (!spare_tokens && cap <= POOL_KEEP) spare_tokens = v, spare_tokens_cap = cap;
    else PyMem_Free(v);
    if (!counts) { give_pending(k.q); return k.list; }
    PyObject *joined = k.q == &held || flush_pending(&k, 1) == 0
        ? PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, k.joined.p, k.joined.n) : NULL;
    buf_give(&k.joined);
    give_pending(k.q);
    return joined;
error:
    if (counts) {
        undo_text(k.q, b, v, from, i, mark);
        buf_give(&k.joined);
    }
    PyMem_Free(v);
    Py_XDECREF(k.list);
    give_pending(k.q);
    return NULL;
}

/* defer_counts(counts): the counts of the texts split into counts from now on are written into it
   once, by flush_counts() or the next defer_counts() (before an error, a new or full token table,
   or a split into other counts), in the order their tokens first came: the same contents and
   order as at the end of each text. The counts held before are written first (even where that
   fails, counts is the one deferred to then). None: nothing deferred. */
static PyObject *defer_counts(PyObject *self, PyObject *counts) {
    if (counts != Py_None && !PyDict_Check(counts)) { PyErr_SetString(PyExc_TypeError, "counts: a dict or None"); return NULL; }
    if (defer_into(counts == Py_None ? NULL : counts, 1) < 0) return NULL;
    Py_RETURN_NONE;
}

/* flush_counts(): the counts held for defer_counts' counts written into it (still deferred to);
   the number of tokens that were pending */
static PyObject *flush_counts(PyObject *self, PyObject *unused) {
    Py_ssize_t n = held.n;
    if (deferred && flush_counts_into(&held, deferred, 1) < 0) return NULL;
    return PyLong_FromSsize_t(n);
}

/* --- tail() --------------------------------------------------------------------------------- */
#define STEP(call) do { if ((call) < 0) goto done; buf_swap(&a, &b); } while (0)

static PyObject *run_tail(Buf a, Buf b, int lowercase, const Scan *known, PyObject *counts) {
    PyObject *result = NULL;
    Scan s;
    if (known) s = *known;
    else scan(&a, &s);
    if (s.undecided) goto undecided;
    /* (the emotion words, lowercase ASCII words without letter runs or laughter that come with
       spaces around them, change none of the scan's findings: configure() checks them) */
    if (s.face) STEP(substitute(&a, &b, face_at));
    if (s.emoji) STEP(substitute(&a, &b, emoji_at));
    int laugh = laugh_passes(s.laugh_seen);
    if (s.triple) {
        STEP(shorten_letters(&a, &b));
        laugh = may_laugh(&a);  /* ("haaah" is "haah" now) */
    }
    if (laugh & 1) STEP(laugh_words(&a, &b));
    if (laugh & 2) STEP(laugh_runs(&a, &b, 0));
    if (laugh & 4) STEP(laugh_runs(&a, &b, 1));
    if (lowercase && s.nonascii && lower(&a, &b) < 0) goto done;
    if (s.quotes2) {
        STEP(protect(&a, &b, '\'', T.close));
        STEP(protect(&a, &b, '`', T.open));
    }
    int quotes = 0, touching = 0;
    STEP(characters(&a, &b, lowercase && !s.nonascii, &quotes, &touching));
    if (quotes) STEP(open_quotes(&a, &b));
    if (touching) STEP(colon_comma(&a, &b));
    STEP(pad(&a, &b, !touching));
    result = split(&a, counts);
    goto done;
undecided:
    result = Py_None;
    Py_INCREF(result);
done:
    buf_give(&a);
    buf_give(&b);
    return result;
}

/* tail() and plain()'s checks of counts and of the table, and the text as a buffer (0, or -1
   with the error set) */
static int take_text(PyObject *text, PyObject *counts, Buf *a) {
    if (counts != Py_None && !PyDict_Check(counts)) { PyErr_SetString(PyExc_TypeError, "counts: a dict"); return -1; }
    if (!T.ready) { PyErr_SetString(PyExc_RuntimeError, "call configure() first"); return -1; }
    Py_ssize_t n = PyUnicode_GetLength(text);
    if (buf_take(a, n + 1) < 0) return -1;
    if (!PyUnicode_AsUCS4(text, a->p, a->cap, 0)) { buf_give(a); return -1; }
    a->n = n;
    return 0;
}

static PyObject *tail(PyObject *self, PyObject *args) {
    PyObject *text, *counts = Py_None;
    int lowercase;
    Buf a, b;
    if (!PyArg_ParseTuple(args, "Up|O", &text, &lowercase, &counts) || take_text(text, counts, &a) < 0) return NULL;
    if (buf_take(&b, 6 * a.n + 16) < 0) { buf_give(&a); return NULL; }
    return run_tail(a, b, lowercase, NULL, counts == Py_None ? NULL : counts);
}

/* --- plain(): the whole fast path for a text the markup, e-mail and url steps leave as it is */
/* cleaning._DOT_TLD: . then one of TLDS (as re.I matches it) then \b */
static int dot_tld(const Buf *b, Py_ssize_t dot) {
    Py_UCS4 next = dot + 1 < b->n ? fold_re(b->p[dot + 1]) : 0;
    if (next < 'a' || next > 'z') return 0;
    for (Py_ssize_t k = 0; k < T.n_tlds; k++) {
        Py_ssize_t end = dot + 1 + T.tld_len[k];
        if ((unsigned char)T.tlds[k][0] == next && fold_match(b, dot + 1, T.tlds[k]) && (end == b->n || !is_word(b->p[end])))
            return 1;
    }
    return 0;
}

/* Why plain() leaves a text to Python (0: it does not), cleaning.REFUSED_ENTITIES and the others: */
enum { ENTITIES = 1, FOLLOWED = 2, OTHER = 4, LINKS = 8 };
/* The causes of the triggers that end at b->p[i] (cleaning.NATIVE_TRIGGERS, matched as re.I
   would), LINKS for a domain ending, OTHER for what is not printable but a newline (strip_markup
   collapses whitespace where the text is not isprintable()). With none anywhere, and no line
   rule matching, strip_markup changes nothing but whitespace and no e-mail or url rule applies. */
static int refusal(Py_UCS4 c, const Buf *b, Py_ssize_t i) {
    int why = 0;
    if (c < 128) {
        Py_UCS4 f = fold(c);
        for (Py_ssize_t k = 0; k < T.n_by_last[f]; k++) {
            const Trigger *g = &T.triggers[T.by_last[f][k]];
            Py_ssize_t start = i + 1 - g->text.n, j = 0;
            if (start < 0 || (g->cause & why)) continue;
            while (j < g->text.n && fold_re(b->p[start + j]) == fold(g->text.p[j])) j++;
            if (j == g->text.n) why |= g->cause;
        }
        if (c == '.' && dot_tld(b, i)) why |= LINKS;
    }
    return c != '\n' && !Py_UNICODE_ISPRINTABLE(c) ? why | OTHER : why;
}

/* The causes but those in skip of the line rules (cleaning.NATIVE_LINE_RULES) that match the
   line starting at b->p[i], each asked (pattern.match(text, i)) where the line starts with a
   character its match can start with; -1 with the error set */
static int line_refusal(PyObject *text, const Buf *b, Py_ssize_t i, int skip) {
    Py_UCS4 c = b->p[i];
    int why = 0;
    PyObject *argv[2] = {text, NULL};
    if (c < 128 && !T.line_start[c]) return 0;
    for (Py_ssize_t k = 0; k < T.n_line_rules && why >= 0; k++) {
        const LineRule *r = &T.line_rules[k];
        int may = r->anything || (c < 128 ? r->ascii[c] : 0) || (r->digits && is_decimal(c));
        for (Py_ssize_t j = 0; !may && c >= 128 && j < r->wide.n; j++) may = r->wide.p[j] == c;
        if (!may || !(r->cause & ~skip & ~why)) continue;
        PyObject *found = argv[1] || (argv[1] = PyLong_FromSsize_t(i)) ? PyObject_Vectorcall(r->match, argv, 2, NULL) : NULL;
        if (!found) why = -1;
        else if (found != Py_None) why |= r->cause;
        Py_XDECREF(found);
    }
    Py_XDECREF(argv[1]);
    return why;
}

/* literal: the causes already dealt with (cleaning._native_plain: entities decoded, or those
   and the followed rules run: what is left of their characters stays as it is); -1 with the
   error set */
static int plain_text(PyObject *text, const Buf *b, Scan *s, int literal) {
    int why = 0;
    memset(s, 0, sizeof *s);
    for (Py_ssize_t i = 0; i < b->n && !(why & OTHER); i++) {
        Py_UCS4 c = b->p[i];
        if (!why) scan_at(b, i, s);  /* (the same on the text before strip_ends: see there; no use once refused) */
        if (i == 0 || b->p[i - 1] == '\n') {
            int line = line_refusal(text, b, i, literal | why);  /* (a cause found is not asked for again) */
            if (line < 0) return -1;
            why |= line;
        }
        if (c >= 128 || (ascii_class[c] & K_REFUSE)) why |= refusal(c, b, i) & ~literal;
    }
    return why;
}

/* strip_markup's whitespace rule on such a text: newlines become spaces, the ends are stripped
   (runs of spaces stay: no later rule tells one space from several). The scan of the text
   before is the scan after: what it looks for is told by \s or the ends, never by which
   whitespace character or how many. */
static void strip_ends(Buf *b) {
    Py_ssize_t start = 0, end = b->n;
    while (start < end && (b->p[start] == ' ' || b->p[start] == '\n')) start++;
    while (end > start && (b->p[end - 1] == ' ' || b->p[end - 1] == '\n')) end--;
    for (Py_ssize_t i = start; i < end; i++) b->p[i - start] = b->p[i] == '\n' ? ' ' : b->p[i];
    b->n = end - start;
}

static PyObject *plain(PyObject *self, PyObject *args) {
    PyObject *text, *counts = Py_None;
    int lowercase, literal = 0;
    Buf a, b;
    if (!PyArg_ParseTuple(args, "Up|iO", &text, &lowercase, &literal, &counts) || take_text(text, counts, &a) < 0)
        return NULL;
    Scan s;
    int why = plain_text(text, &a, &s, literal & (ENTITIES | FOLLOWED | LINKS));
    if (why) { buf_give(&a); return why < 0 ? NULL : PyLong_FromLong(why); }
    strip_ends(&a);
    if (buf_take(&b, 6 * a.n + 16) < 0) { buf_give(&a); return NULL; }
    return run_tail(a, b, lowercase, &s, counts == Py_None ? NULL : counts);
}

/* --- emphasis, inline code and superscripts: strip_markup's last rules ------------------------ */
/* emphasis(text), inline_code(text) and superscript(text) return the str that cleaning._emphasis,
   cleaning._INLINE_CODE.sub(r"\1", text) and cleaning._superscript_sub return, for every str (they
   never leave a text to Python), each in linear time (tests/test_lsdscc_cleaning_native_markup.py
   compares them on random, hostile and realistic text and on every code point). They need no
   table: their characters are the patterns' literals, \s, \S and \w are re's (is_space, is_word).
   Each result is slices of its text: they read the str in place and copy the slices in its kind. */

/* a str's characters, read in place (or a Slices' result, for the second emphasis pass) */
typedef struct {
    int kind;
    const void *data;
    Py_ssize_t n;
} Chars;
#define CHAR_AT(t, i) PyUnicode_READ((t)->kind, (t)->data, (i))

/* the result: slices of the text, in its kind (never longer than the text: no growth) */
typedef struct {
    int kind;
    char *p;
    Py_ssize_t n;
} Slices;

/* the str's characters and room for a result (0, or -1 with the error set) */
static int take_chars(PyObject *text, Chars *t, Slices *out) {
    if (!PyUnicode_Check(text)) { PyErr_SetString(PyExc_TypeError, "text: a str, please"); return -1; }
    t->kind = out->kind = PyUnicode_KIND(text);
    t->data = PyUnicode_DATA(text);
    t->n = PyUnicode_GET_LENGTH(text);
    out->n = 0;
    out->p = PyMem_Malloc((size_t)t->kind * (t->n + 1));
    if (!out->p) { PyErr_NoMemory(); return -1; }
    return 0;
}

#include <wchar.h>  /* (wmemchr) */

/* the first i >= from where t holds ch (t->n: none): the C library's memchr on a str of one
   byte a character and wmemchr on one of four (where a wchar_t is a Py_UCS4), a loop of one
   width on the others (not PyUnicode_READ's test of the width at every character) */
static Py_ssize_t find_char(const Chars *t, Py_UCS4 ch, Py_ssize_t from) {
    Py_ssize_t n = t->n;
    if (from >= n) return n;
    if (t->kind == PyUnicode_1BYTE_KIND) {
        const Py_UCS1 *d = t->data, *f = ch < 256 ? memchr(d + from, (int)ch, (size_t)(n - from)) : NULL;
        return f ? f - d : n;
    }
    if (t->kind == PyUnicode_2BYTE_KIND) {
        const Py_UCS2 *d = t->data;
        while (from < n && d[from] != ch) from++;
        return from;
    }
#if WCHAR_MAX > 0xFFFF
    const wchar_t *d = t->data, *f = wmemchr(d + from, (wchar_t)ch, (size_t)(n - from));
    return f ? f - d : n;
#else
    const Py_UCS4 *d = t->data;
    while (from < n && d[from] != ch) from++;
    return from;
#endif
}

/* characters from..to of t appended to out */
static inline void put_slice(Slices *out, const Chars *t, Py_ssize_t from, Py_ssize_t to) {
    memcpy(out->p + out->n * out->kind, (const char *)t->data + from * t->kind, (size_t)(to - from) * t->kind);
    out->n += to - from;
}

/* the result as a str (narrowed to its widest character), freed; text itself where nothing
   changed (changed: 0); NULL with the error set */
static PyObject *slices_to_str(Slices *out, PyObject *text, int changed) {
    PyObject *s = changed ? PyUnicode_FromKindAndData(out->kind, out->p, out->n) : (Py_INCREF(text), text);
    PyMem_Free(out->p);
    return s;
}

/* _EMPHASIS = (\*\*{0,2}|__{0,2}|~~)(?=\S)(.+?)(?<=\S)\1: its delimiters * ** *** _ __ ___ ~~,
   numbered 3 * (an underscore) + length - 1, and 6 for ~~ */
#define N_DELIMITERS 7

/* whether the delimiter (len times ch) closes at m: (?<=\S) and then the delimiter */
static inline int closes_at(const Chars *t, Py_ssize_t m, Py_UCS4 ch, int len) {
    if (m < 1 || m + len > t->n) return 0;
    for (int k = 0; k < len; k++)
        if (CHAR_AT(t, m + k) != ch) return 0;
    return !is_space(CHAR_AT(t, m - 1));
}

/* the first m >= from where the delimiter closes (t->n: nowhere). *cursor is the answer to the
   delimiter's question before (-1: none yet); from never decreases, so each position is looked
   at once a delimiter: linear time however many openers fail (cleaning._emphasis_subn's
   binary search in the closers' positions, as a cursor). */
static Py_ssize_t next_closer(const Chars *t, Py_ssize_t from, Py_UCS4 ch, int len, Py_ssize_t *cursor) {
    if (*cursor >= from) return *cursor;
    Py_ssize_t m = find_char(t, ch, from);
    while (m < t->n && !closes_at(t, m, ch, len)) m = find_char(t, ch, m + 1);
    return *cursor = m;
}

/* _EMPHASIS.subn(r"\2", t) into out: from each delimiter run (*** to *, ___ to _, ~~; longest
   first, as re's backtracking tries them), where (?=\S) holds after it, the match ends at the
   first closer of that delimiter before the line's end (.+? does not cross a newline), and
   the search goes on after it. The number of matches. */
static Py_ssize_t emphasis_pass(const Chars *t, Slices *out) {
    Py_ssize_t cursor[N_DELIMITERS], newline = -1, pos = 0, found = 0, n = t->n;
    Py_ssize_t next[3] = {-1, -1, -1};  /* the next *, _ and ~ (each a cursor) */
    static const Py_UCS4 delimiter[3] = {'*', '_', '~'};
    for (int k = 0; k < N_DELIMITERS; k++) cursor[k] = -1;
    for (Py_ssize_t p = 0; p < n; p++) {
        Py_ssize_t first = n;
        for (int k = 0; k < 3; k++) {
            if (next[k] < p) next[k] = find_char(t, delimiter[k], p);
            if (next[k] < first) first = next[k];
        }
        if ((p = first) == n) break;
        Py_UCS4 c = CHAR_AT(t, p);
        int run = 1;
        while (run < 3 && p + run < n && CHAR_AT(t, p + run) == c) run++;
        if (c == '~') run = run >= 2 ? 2 : 0;  /* ~~ only */
        for (int len = run; len >= (c == '~' ? 2 : 1); len--) {
            Py_ssize_t a = p + len;  /* the emphasised text starts here */
            if (a >= n || is_space(CHAR_AT(t, a))) continue;
            if (newline < a) newline = find_char(t, '\n', a);  /* (a shorter delimiter's a is a delimiter
                                                                 character: not a newline) */
            int k = c == '~' ? 6 : 3 * (c == '_') + len - 1;
            Py_ssize_t m = next_closer(t, a + 1, c, len, &cursor[k]);
            if (m < newline) {
                put_slice(out, t, pos, p);
                put_slice(out, t, a, m);
                pos = m + len;
                p = pos - 1;
                found++;
                break;
            }
        }
    }
    put_slice(out, t, pos, n);
    return found;
}

/* whether a delimiter is left: * or _ or ~~ (cleaning._emphasis's guard for the nested pass) */
static int has_delimiter(const Chars *t) {
    if (find_char(t, '*', 0) < t->n || find_char(t, '_', 0) < t->n) return 1;
    for (Py_ssize_t i = find_char(t, '~', 0); i + 1 < t->n; i = find_char(t, '~', i + 1))
        if (CHAR_AT(t, i + 1) == '~') return 1;
    return 0;
}

/* cleaning._emphasis: a pass, and where it matched and a delimiter is left (***a***, **_a_**) a
   second one */
static PyObject *emphasis(PyObject *self, PyObject *text) {
    Chars t;
    Slices out;
    if (take_chars(text, &t, &out) < 0) return NULL;
    Py_ssize_t found = emphasis_pass(&t, &out);
    Chars first = {out.kind, out.p, out.n};
    if (found > 0 && has_delimiter(&first)) {
        Slices again = {out.kind, PyMem_Malloc((size_t)out.kind * (out.n + 1)), 0};
        if (!again.p) { PyMem_Free(out.p); return PyErr_NoMemory(); }
        emphasis_pass(&first, &again);
        PyMem_Free(out.p);
        out = again;
    }
    return slices_to_str(&out, text, found > 0);
}

/* _INLINE_CODE.sub(r"\1") = `+([^`]*)`+ from each run of backticks: to the next run (both go, the
   text between stays, newlines too); with no backtick after it, a run of two or more goes (re
   gives its last backtick to the closing `+, the text between is empty) and a single one stays */
static PyObject *inline_code(PyObject *self, PyObject *text) {
    Chars t;
    Slices out;
    if (take_chars(text, &t, &out) < 0) return NULL;
    Py_ssize_t n = t.n, pos = 0, p = 0;
    while ((p = find_char(&t, '`', p)) < n) {
        Py_ssize_t r = p, q;
        while (r < n && CHAR_AT(&t, r) == '`') r++;
        q = find_char(&t, '`', r);
        if (q == n) {  /* no backtick after the run */
            if (r - p < 2) break;  /* (a single one: nothing after it matches) */
            q = r;  /* (the run's last backtick closes, the text between is empty) */
        }
        put_slice(&out, &t, pos, p);
        put_slice(&out, &t, r, q);
        for (p = q; p < n && CHAR_AT(&t, p) == '`'; p++) {}
        pos = p;
    }
    put_slice(&out, &t, pos, n);
    return slices_to_str(&out, text, pos > 0);
}

/* _SUPERSCRIPT.sub (cleaning._superscript_sub) = \^\(([^)]*)\)|\^(?=\w): ^( ... ) becomes what
   is between the parentheses where a ) follows (the first one); else a ^ before a word character
   goes. The next ) is a cursor: each position is looked at once. */
static PyObject *superscript(PyObject *self, PyObject *text) {
    Chars t;
    Slices out;
    if (take_chars(text, &t, &out) < 0) return NULL;
    Py_ssize_t n = t.n, pos = 0, close = -1;
    for (Py_ssize_t p = find_char(&t, '^', 0); p + 1 < n; p = find_char(&t, '^', p + 1)) {
        Py_UCS4 next = CHAR_AT(&t, p + 1);
        if (next == '(') {
            if (close < p + 2) close = find_char(&t, ')', p + 2);
            if (close < n) {
                put_slice(&out, &t, pos, p);
                put_slice(&out, &t, p + 2, close);
                pos = close + 1;
                p = close;
            }
        } else if (is_word(next)) {
            put_slice(&out, &t, pos, p);
            pos = p + 1;
        }
    }
    put_slice(&out, &t, pos, n);
    return slices_to_str(&out, text, pos > 0);
}

/* --- links, quotes, spoilers, tags, headers, bullets: cleaning._followed_head ----------------- */
/* Each rule reproduces a regex of lsdscc/corpus/cleaning.py (its pattern is quoted; the tests
   check the patterns are still these) as a scan of the text in linear time: where re would try
   a scan again from a later opener, the outcome known from the earlier one is kept. \s is
   Py_UNICODE_ISSPACE (re's \s on str), \d Py_UNICODE_ISDECIMAL, str.strip() strips is_space. */

/* the first position >= from of the character c, or -1 (wmemchr where wchar_t is Py_UCS4's
   size: the C library's vector search, several times faster than a loop) */
static inline Py_ssize_t fm_chr(const Buf *b, Py_ssize_t from, Py_UCS4 c) {
    if (from < 0) from = 0;
    if (from >= b->n) return -1;
#if WCHAR_MAX > 0xFFFF
    const wchar_t *at = wmemchr((const wchar_t *)b->p + from, (wchar_t)c, (size_t)(b->n - from));
    return at ? (Py_ssize_t)(at - (const wchar_t *)b->p) : -1;
#else
    for (Py_ssize_t i = from; i < b->n; i++)
        if (b->p[i] == c) return i;
    return -1;
#endif
}

/* the first position >= from where the ASCII string s starts, or -1 */
static Py_ssize_t fm_find(const Buf *b, Py_ssize_t from, const char *s) {
    for (Py_ssize_t i = fm_chr(b, from, (unsigned char)s[0]); i >= 0; i = fm_chr(b, i + 1, (unsigned char)s[0])) {
        Py_ssize_t j = 1;
        while (s[j] && i + j < b->n && b->p[i + j] == (unsigned char)s[j]) j++;
        if (!s[j]) return i;
    }
    return -1;
}

static inline int fm_at(const Buf *b, Py_ssize_t i, Py_UCS4 c) { return i < b->n && b->p[i] == c; }

static int fm_copy(Buf *out, const Buf *in, Py_ssize_t from, Py_ssize_t to) {
    return to > from ? buf_putu(out, in->p + from, to - from) : 0;
}

/* the end of the run from i of characters that are neither whitespace nor in stop (ASCII): a
   run asked again from inside it (positions are asked in increasing order) reuses its end */
typedef struct { Py_ssize_t start, end; } FmRun;

static Py_ssize_t fm_run(const Buf *b, FmRun *r, Py_ssize_t i, const char *stop) {
    if (r->start <= i && i <= r->end) return r->end;
    Py_ssize_t e = i;
    while (e < b->n && !is_space(b->p[e]) && !(b->p[e] < 128 && b->p[e] && strchr(stop, (int)b->p[e]))) e++;
    r->start = i;
    r->end = e;
    return e;
}

/* the end of a pass: 0 where it matched nothing (out is left empty: the text stays as it is),
   else 1 with the rest of the text copied (-1 with the error set) */
static int fm_finish(Buf *out, const Buf *in, Py_ssize_t pos) {
    if (!pos) {
        out->n = 0;
        return 0;
    }
    return fm_copy(out, in, pos, in->n) < 0 ? -1 : 1;
}

static Py_ssize_t fm_spaces(const Buf *b, Py_ssize_t i) {
    while (i < b->n && is_space(b->p[i])) i++;
    return i;
}

static Py_ssize_t fm_blanks(const Buf *b, Py_ssize_t i) {  /* [ \t]* */
    while (i < b->n && (b->p[i] == ' ' || b->p[i] == '\t')) i++;
    return i;
}

/* re.sub of a lazy opener.*?closer pattern (re.S): each opener to the first closer after it
   becomes the text between them (keep) or a space. (_HTML_COMMENT "<!--.*?-->" -> " ";
   _SPOILER ">!(.*?)!<" -> \1.) With no closer after an opener none follows a later one. */
static int fm_lazy_pairs(const Buf *in, Buf *out, const char *opener, const char *closer, int keep) {
    Py_ssize_t pos = 0, a = (Py_ssize_t)strlen(opener), z = (Py_ssize_t)strlen(closer);
    for (Py_ssize_t i = fm_find(in, 0, opener); i >= 0; i = fm_find(in, pos, opener)) {
        Py_ssize_t j = fm_find(in, i + a, closer);
        if (j < 0) break;
        if (fm_copy(out, in, pos, i) < 0 || (keep ? fm_copy(out, in, i + a, j) : buf_put(out, ' ')) < 0) return -1;
        pos = j + z;
    }
    return fm_finish(out, in, pos);
}

/* a line rule (re.M, ^ at the text's start and after each \n): rule(in, p) is the end of its
   match at the line start p, or -1; each match is deleted, the search going on after it */
typedef Py_ssize_t (*FmLineRule)(const Buf *in, Py_ssize_t p, void *memo);

static int fm_lines(const Buf *in, Buf *out, FmLineRule rule, void *memo) {
    Py_ssize_t pos = 0, p = 0;
    while (p <= in->n) {
        Py_ssize_t end = rule(in, p, memo);
        if (end >= 0) {
            if (fm_copy(out, in, pos, p) < 0) return -1;
            pos = p = end;
        }
        if ((p = fm_chr(in, p, '\n')) < 0) break;
        p++;
    }
    return fm_finish(out, in, pos);
}

/* _QUOTE "^[ \t]*(?:>[ \t]?)+" (re.M) */
static Py_ssize_t fm_quote(const Buf *in, Py_ssize_t p, void *memo) {
    Py_ssize_t i = fm_blanks(in, p);
    if (!fm_at(in, i, '>')) return -1;
    while (fm_at(in, i, '>')) {
        i++;
        if (fm_at(in, i, ' ') || fm_at(in, i, '\t')) i++;
    }
    return i;
}

/* _HEADER "^[ \t]*#{1,6}[ \t]*" (re.M) */
static Py_ssize_t fm_header(const Buf *in, Py_ssize_t p, void *memo) {
    Py_ssize_t i = fm_blanks(in, p), k = 0;
    while (k < 6 && fm_at(in, i + k, '#')) k++;
    return k ? fm_blanks(in, i + k) : -1;
}

/* _BULLET "^[ \t]*(?:[-*+•]|\d{1,3}[.)])[ \t]+" (re.M) */
static Py_ssize_t fm_bullet(const Buf *in, Py_ssize_t p, void *memo) {
    Py_ssize_t i = fm_blanks(in, p), k = 0;
    if (i >= in->n) return -1;
    Py_UCS4 c = in->p[i];
    if (c == '-' || c == '*' || c == '+' || c == 0x2022) i++;
    else {
        while (k < 3 && i + k < in->n && is_decimal(in->p[i + k])) k++;
        if (!k || !(fm_at(in, i + k, '.') || fm_at(in, i + k, ')'))) return -1;
        i += k + 1;
    }
    Py_ssize_t end = fm_blanks(in, i);
    return end > i ? end : -1;
}

/* _REF_LINK_DEF "^\s*\[[^\]]+\]:\s*\S+.*$" (re.M): \s* may cross lines (every line start of one
   run of whitespace reaches the same [), the label ends at the first ] */
typedef struct { FmRun spaces; Py_ssize_t close, tail_close, tail_end; } FmRefDef;

static Py_ssize_t fm_ref_def(const Buf *in, Py_ssize_t p, void *memo) {
    FmRefDef *m = memo;
    Py_ssize_t r = p;
    if (!(m->spaces.start <= p && p <= m->spaces.end)) {
        m->spaces.start = p;
        m->spaces.end = fm_spaces(in, p);
    }
    r = m->spaces.end;
    if (!fm_at(in, r, '[')) return -1;
    if (m->close <= r) {
        m->close = fm_find(in, r + 1, "]");
        if (m->close < 0) m->close = in->n;  /* (no ]: none after any later [ either) */
    }
    if (m->close == in->n || m->close < r + 2) return -1;
    if (m->tail_close != m->close) {
        Py_ssize_t s = fm_spaces(in, m->close + 2), end = -1;
        if (fm_at(in, m->close + 1, ':') && s < in->n) {
            end = fm_chr(in, s, '\n');  /* (\S+.*$: to the line's end) */
            if (end < 0) end = in->n;
        }
        m->tail_close = m->close;
        m->tail_end = end;
    }
    return m->tail_end;
}

/* The sub of "opener [^\]]* ] tail" patterns (cleaning._bracket_sub): the label runs from the
   opener to the first ] (q); every opener before the same ] shares tail(q), found once.
   tail gives the match's end (or -1) and the url (*u0 to *u1); the replacement is the label,
   or (blank_to_url) the url where the label is blank (str.strip() empty); a label shorter
   than min_label fails. */
typedef Py_ssize_t (*FmTail)(const Buf *in, Py_ssize_t q, void *memo, Py_ssize_t *u0, Py_ssize_t *u1);

static int fm_blank(const Buf *b, Py_ssize_t from, Py_ssize_t to) {
    while (from < to && is_space(b->p[from])) from++;
    return from == to;
}

static int fm_brackets(const Buf *in, Buf *out, const char *opener, FmTail tail, void *memo, int min_label,
                       int blank_to_url) {
    Py_ssize_t pos = 0, close = -1, known = -1, end = -1, u0 = 0, u1 = 0, a = (Py_ssize_t)strlen(opener);
    Py_ssize_t i = fm_find(in, 0, opener);
    while (i >= 0) {
        Py_ssize_t label = i + a;
        if (close < label && (close = fm_find(in, label, "]")) < 0) break;
        if (known != close) {
            known = close;
            end = tail(in, close, memo, &u0, &u1);
        }
        if (end >= 0 && close - label >= min_label) {
            int url = blank_to_url && fm_blank(in, label, close);
            if (fm_copy(out, in, pos, i) < 0 || (url ? fm_copy(out, in, u0, u1) : fm_copy(out, in, label, close)) < 0)
                return -1;
            pos = end;
            i = fm_find(in, pos, opener);
        } else
            i = fm_find(in, i + 1, opener);
    }
    return fm_finish(out, in, pos);
}

typedef struct { FmRun urls; Py_ssize_t e, e_end; } FmUrlMemo;

/* a title at g: "[^"]*" then \s* then ) (spaces_before: \s* there, else nothing): the end or -1 */
static Py_ssize_t fm_title_end(const Buf *in, Py_ssize_t g, int spaces_before) {
    if (!fm_at(in, g, '"')) return -1;
    Py_ssize_t h = fm_find(in, g + 1, "\"");
    if (h < 0) return -1;
    Py_ssize_t k = spaces_before ? fm_spaces(in, h + 1) : h + 1;
    return fm_at(in, k, ')') ? k + 1 : -1;
}

/* _IMAGE "!\[([^\]]*)\]\([^)\s]*(?:\s+\"[^\"]*\")?\)" -> \1: from the ] at q */
static Py_ssize_t fm_image_tail(const Buf *in, Py_ssize_t q, void *memo, Py_ssize_t *u0, Py_ssize_t *u1) {
    FmUrlMemo *m = memo;
    if (!fm_at(in, q + 1, '(')) return -1;
    Py_ssize_t e = fm_run(in, &m->urls, q + 2, ")");
    if (m->e != e) {  /* (?:\s+"[^"]*")?\) at the url's end */
        Py_ssize_t g = fm_spaces(in, e);
        m->e = e;
        m->e_end = fm_at(in, e, ')') ? e + 1 : g > e ? fm_title_end(in, g, 0) : -1;
    }
    return m->e_end;
}

/* _LINK "\[([^\]]*)\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)": from the ] at q. The url keeps
   all it can; where the rest fails from its end, re gives the spaces after ( back to a title. */
static Py_ssize_t fm_link_tail(const Buf *in, Py_ssize_t q, void *memo, Py_ssize_t *u0, Py_ssize_t *u1) {
    FmUrlMemo *m = memo;
    if (!fm_at(in, q + 1, '(')) return -1;
    Py_ssize_t j = fm_spaces(in, q + 2), e = fm_run(in, &m->urls, j, ")>");
    if (m->e != e) {  /* >?(?:\s+"[^"]*")?\s*\) at the url's end */
        Py_ssize_t f = fm_at(in, e, '>') ? e + 1 : e, g = fm_spaces(in, f);
        m->e = e;
        m->e_end = fm_at(in, g, ')') ? g + 1 : g > f ? fm_title_end(in, g, 1) : -1;
    }
    *u0 = j + fm_at(in, j, '<');
    *u1 = e;
    if (m->e_end >= 0) return m->e_end;
    *u1 = *u0 = j;
    return j > q + 2 ? fm_title_end(in, j, 1) : -1;
}

/* _REF_LINK "\[([^\]]+)\]\[[^\]]*\]" -> \1: from the ] at q */
static Py_ssize_t fm_ref_tail(const Buf *in, Py_ssize_t q, void *memo, Py_ssize_t *u0, Py_ssize_t *u1) {
    if (!fm_at(in, q + 1, '[')) return -1;
    Py_ssize_t z = fm_find(in, q + 2, "]");
    return z < 0 ? -1 : z + 1;
}

/* one pass (1: it changed the text, a is the result; 0: a is as it was; -1 with the error set) */
static int fm_pass(int done, Buf *a, Buf *b) {
    if (done > 0) buf_swap(a, b);
    return done;
}

/* cleaning._links: images, inline links, reference definitions, reference links */
static int fm_links(Buf *a, Buf *b) {
    FmUrlMemo image = {{-1, -1}, -1, -1}, link = {{-1, -1}, -1, -1};
    FmRefDef def = {{-1, -1}, -1, -2, -1};
    int done[4];
    if ((done[0] = fm_pass(fm_brackets(a, b, "![", fm_image_tail, &image, 0, 0), a, b)) < 0
        || (done[1] = fm_pass(fm_brackets(a, b, "[", fm_link_tail, &link, 0, 1), a, b)) < 0
        || (done[2] = fm_pass(fm_lines(a, b, fm_ref_def, &def), a, b)) < 0
        || (done[3] = fm_pass(fm_brackets(a, b, "[", fm_ref_tail, NULL, 1, 0), a, b)) < 0)
        return -1;
    return done[0] | done[1] | done[2] | done[3];
}

static int fm_scheme(const Buf *b, Py_ssize_t i) {  /* (?:https?|ftp):// at i: its length, or 0 */
    static const char *schemes[] = {"http://", "https://", "ftp://"};
    for (int k = 0; k < 3; k++) {
        Py_ssize_t n = (Py_ssize_t)strlen(schemes[k]), j = 0;
        while (j < n && fm_at(b, i + j, (unsigned char)schemes[k][j])) j++;
        if (j == n) return (int)n;
    }
    return 0;
}

/* _AUTOLINK "<((?:https?|ftp)://[^>\s]+|[^>\s@]+@[^>\s@]+)>" -> " \1 ": each alternative a run
   (found once for every < inside it) closed by > */
static int fm_autolinks(const Buf *in, Buf *out) {
    FmRun urls = {-1, -1}, names = {-1, -1}, domains = {-1, -1};
    Py_ssize_t pos = 0;
    for (Py_ssize_t i = fm_find(in, 0, "<"); i >= 0; i = fm_find(in, i + 1, "<")) {
        Py_ssize_t end = -1, s = i + 1 + fm_scheme(in, i + 1);
        if (s > i + 1) {
            Py_ssize_t e = fm_run(in, &urls, s, ">");
            if (e > s && fm_at(in, e, '>')) end = e;
        }
        if (end < 0) {
            Py_ssize_t at = fm_run(in, &names, i + 1, ">@");
            if (at > i + 1 && fm_at(in, at, '@')) {
                Py_ssize_t e = fm_run(in, &domains, at + 1, ">@");
                if (e > at + 1 && fm_at(in, e, '>')) end = e;
            }
        }
        if (end < 0) continue;
        if (fm_copy(out, in, pos, i) < 0 || buf_put(out, ' ') < 0 || fm_copy(out, in, i + 1, end) < 0
            || buf_put(out, ' ') < 0)
            return -1;
        pos = end + 1;
        i = end;
    }
    return fm_finish(out, in, pos);
}

/* _HTML_TAG "</?[A-Za-z][A-Za-z0-9]*(?:\s[^<>]*)?/?>" -> " ": the end of the tag at i, or -1 */
static Py_ssize_t fm_tag_at(const Buf *in, Py_ssize_t i) {
    Py_ssize_t k = i + 1 + fm_at(in, i + 1, '/');
    if (k >= in->n || !is_letter(in->p[k])) return -1;
    while (k < in->n && in->p[k] < 128 && (is_letter(in->p[k]) || (in->p[k] >= '0' && in->p[k] <= '9'))) k++;
    if (k < in->n && is_space(in->p[k])) {  /* the attributes run to a < or >: only > ends the tag */
        Py_ssize_t m = k + 1;
        while (m < in->n && in->p[m] != '<' && in->p[m] != '>') m++;
        return fm_at(in, m, '>') ? m + 1 : -1;
    }
    if (fm_at(in, k, '/')) k++;
    return fm_at(in, k, '>') ? k + 1 : -1;
}

static int fm_tags(const Buf *in, Buf *out) {
    Py_ssize_t pos = 0;
    for (Py_ssize_t i = fm_find(in, 0, "<"); i >= 0; i = fm_find(in, i + 1, "<")) {
        Py_ssize_t end = fm_tag_at(in, i);
        if (end < 0) continue;
        if (fm_copy(out, in, pos, i) < 0 || buf_put(out, ' ') < 0) return -1;
        pos = end;
        i = end - 1;
    }
    return fm_finish(out, in, pos);
}

/* --- the line rules strip_markup runs between _followed_head's (indented code, setext
   lines, horizontal rules) ------------------------------------------------------------------ */
/* plain() refuses a text whose own lines match them (REFUSED_OTHER), but removing an HTML comment
   (before indented code and setext lines) or a quote marker, link, tag or header (before rules)
   can make such a line: fm_head runs them at strip_markup's place, as cleaning._followed_head. */

/* _INDENTED_CODE "^(?: {4}|\t)" (re.M) */
static Py_ssize_t fm_indented(const Buf *in, Py_ssize_t p, void *memo) {
    if (fm_at(in, p, '\t')) return p + 1;
    for (int k = 0; k < 4; k++)
        if (!fm_at(in, p + k, ' ')) return -1;
    return p + 4;
}

/* _SETEXT "^[ \t]*(?:=+|-+)[ \t]*$" (re.M; $ before a \n or at the end) */
static Py_ssize_t fm_setext(const Buf *in, Py_ssize_t p, void *memo) {
    Py_ssize_t i = fm_blanks(in, p), k = i;
    if (!(fm_at(in, i, '=') || fm_at(in, i, '-'))) return -1;
    while (fm_at(in, k, in->p[i])) k++;
    k = fm_blanks(in, k);
    return k == in->n || in->p[k] == '\n' ? k : -1;
}

/* _HRULE "^[ \t]*(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,})$" (re.M): a line of one of
   * - _ three times or more and blanks, the first not blank */
static Py_ssize_t fm_hrule(const Buf *in, Py_ssize_t p, void *memo) {
    Py_ssize_t i = fm_blanks(in, p), count = 0;
    if (!(fm_at(in, i, '*') || fm_at(in, i, '-') || fm_at(in, i, '_'))) return -1;
    Py_UCS4 c = in->p[i];
    for (; fm_at(in, i, c); count++) i = fm_blanks(in, i + 1);
    return count >= 3 && (i == in->n || in->p[i] == '\n') ? i : -1;
}
/* --- end of the line rules between followed_head's rules ------------------------------ */

/* one rule on a Buf (as fm_pass: a becomes the result where it changed, b is spare) */
enum { FM_COMMENT, FM_INDENTED, FM_SETEXT, FM_QUOTES, FM_LINKS, FM_TAGS, FM_HEADER, FM_HRULE, FM_BULLETS, FM_HEAD };

static int fm_rule(int rule, Buf *a, Buf *b) {
    int first;
    switch (rule) {
    case FM_COMMENT: return fm_pass(fm_lazy_pairs(a, b, "<!--", "-->", 0), a, b);
    case FM_QUOTES:
        if ((first = fm_pass(fm_lazy_pairs(a, b, ">!", "!<", 1), a, b)) < 0) return -1;
        return first | fm_pass(fm_lines(a, b, fm_quote, NULL), a, b);
    case FM_LINKS: return fm_links(a, b);
    case FM_TAGS:
        if ((first = fm_pass(fm_autolinks(a, b), a, b)) < 0) return -1;
        return first | fm_pass(fm_tags(a, b), a, b);
    case FM_HEADER: return fm_pass(fm_lines(a, b, fm_header, NULL), a, b);
    case FM_INDENTED: return fm_pass(fm_lines(a, b, fm_indented, NULL), a, b);
    case FM_SETEXT: return fm_pass(fm_lines(a, b, fm_setext, NULL), a, b);
    case FM_HRULE: return fm_pass(fm_lines(a, b, fm_hrule, NULL), a, b);
    case FM_BULLETS: return fm_pass(fm_lines(a, b, fm_bullet, NULL), a, b);
    }
    return 0;
}

/* which of < > ] # the text holds (bits 1 2 4 8: the guards of cleaning._followed_head), 16 for
   - or =, 32 for * - or _ */
static int fm_guards(const Buf *a) {
    int dash = fm_chr(a, 0, '-') >= 0;
    return (fm_chr(a, 0, '<') >= 0) | (fm_chr(a, 0, '>') >= 0) << 1 | (fm_chr(a, 0, ']') >= 0) << 2
           | (fm_chr(a, 0, '#') >= 0) << 3 | (dash || fm_chr(a, 0, '=') >= 0) << 4
           | (dash || fm_chr(a, 0, '*') >= 0 || fm_chr(a, 0, '_') >= 0) << 5;
}

/* cleaning._followed_head: the rules in its order, each where its guard's character is left;
   setext lines only where the text had a newline (strip_markup's multiline) */
static int fm_head(Buf *a, Buf *b) {
    static const int guard[] = {1, 0, 16, 2, 4, 1, 8, 32, 0};
    int changed = 0, has = fm_guards(a), multiline = fm_chr(a, 0, '\n') >= 0;
    for (int rule = FM_COMMENT; rule <= FM_BULLETS; rule++) {
        if ((guard[rule] && !(has & guard[rule])) || (rule == FM_SETEXT && !multiline)) continue;
        int done = fm_rule(rule, a, b);
        if (done < 0) return -1;
        if (done) has = fm_guards(a);
        changed |= done;
    }
    return changed;
}

/* the rule's function on a str (a str back, the same where nothing changed; None where it
   leaves the text to Python: never yet) */
static PyObject *fm_call(PyObject *args, int rule) {
    PyObject *text, *result = NULL;
    Buf a, b;
    if (!PyArg_ParseTuple(args, "U", &text)) return NULL;
    Py_ssize_t n = PyUnicode_GetLength(text);
    if (buf_init(&a, n + 1) < 0) return NULL;
    if (!PyUnicode_AsUCS4(text, a.p, a.cap, 0) || buf_init(&b, n + 16) < 0) { buf_free(&a); return NULL; }
    a.n = n;
    int done = rule == FM_HEAD ? fm_head(&a, &b) : fm_rule(rule, &a, &b);
    if (done > 0) result = PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, a.p, a.n);
    else if (done == 0) result = (Py_INCREF(text), text);
    buf_free(&a);
    buf_free(&b);
    return result;
}

/* --- usernames, e-mail addresses, urls and entities ---------------------------------- */
/* may_name_user(text): cleaning.may_name_user; mail_and_urls(text): cleaning._mail_and_urls
   (_EMAIL.sub(" email ", text), then _LSDSCC_URL.sub(_url_token, ...)), or None where it leaves
   the text to Python. tests/test_lsdscc_cleaning_native_names.py compares each with Python. */

/* re's [^\W_] on str: str.isalnum() */
static inline int is_alnum(Py_UCS4 c) {
    return c < 128 ? is_letter(c) || (c >= '0' && c <= '9') : Py_UNICODE_ISALNUM(c);
}

/* _USER_NEXT's last character: [^\w\s.,?;'"] or _ */
static inline int user_next(Py_UCS4 c) {
    if (c == '_') return 1;
    if (c < 128) return c == 0 || (!is_word(c) && !is_space(c) && !strchr(".,?;'\"", (int)c));  /* (strchr finds the 0) */
    return !is_word(c) && !is_space(c);
}

/* cleaning.may_name_user: a _USER_TRIGGERS match ("u" or "U", then "ser" in any ASCII case or
   not, then user_next) where no letter or digit stands before it (_INSIDE_WORD). A match holds
   no other u, so every u is a start finditer tries. */
static PyObject *may_name_user(PyObject *self, PyObject *arg) {
    if (!PyUnicode_Check(arg)) { PyErr_SetString(PyExc_TypeError, "may_name_user: a str, please"); return NULL; }
    int kind = PyUnicode_KIND(arg);
    const void *d = PyUnicode_DATA(arg);
    Py_ssize_t n = PyUnicode_GET_LENGTH(arg);
    for (Py_ssize_t i = 0; i + 1 < n; i++) {
        if ((PyUnicode_READ(kind, d, i) | 0x20) != 'u') continue;
        if (i > 0 && is_alnum(PyUnicode_READ(kind, d, i - 1))) continue;
        if (user_next(PyUnicode_READ(kind, d, i + 1))) Py_RETURN_TRUE;
        if (i + 4 < n && (PyUnicode_READ(kind, d, i + 1) | 0x20) == 's' && (PyUnicode_READ(kind, d, i + 2) | 0x20) == 'e'
            && (PyUnicode_READ(kind, d, i + 3) | 0x20) == 'r' && user_next(PyUnicode_READ(kind, d, i + 4)))
            Py_RETURN_TRUE;
    }
    Py_RETURN_FALSE;
}

/* re's \b in a buffer */
static inline int buf_boundary(const Buf *b, Py_ssize_t i) {
    return (i > 0 && is_word(b->p[i - 1])) != (i < b->n && is_word(b->p[i]));
}

static inline int is_ascii_alnum(Py_UCS4 c) { return c < 128 && (is_letter(c) || (c >= '0' && c <= '9')); }
/* _EMAIL's local part [A-Za-z0-9._%+-], and [A-Za-z0-9-] (an e-mail domain's, or a url domain's under
   re.I on a text without the characters case_folds names) */
static inline int is_local(Py_UCS4 c) { return is_ascii_alnum(c) || (c && c < 128 && strchr("._%+-", (int)c)); }
static inline int is_label(Py_UCS4 c) { return is_ascii_alnum(c) || c == '-'; }

/* _EMAIL's domain from the @ at `at`: [A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b. The labels
   are whole (a label given back leaves no dot to match), and re gives back labels from the last:
   the match ends after the letters starting the last label (not the first) that has two or
   more of them and a word boundary after them. The end, or -1. */
static Py_ssize_t email_domain_end(const Buf *b, Py_ssize_t at) {
    Py_ssize_t i = at + 1, best = -1;
    if (i >= b->n || !is_label(b->p[i])) return -1;
    while (i < b->n && is_label(b->p[i])) i++;
    while (i + 1 < b->n && b->p[i] == '.' && is_label(b->p[i + 1])) {
        Py_ssize_t start = i + 1, j = start;
        while (j < b->n && is_letter(b->p[j])) j++;
        if (j - start >= 2 && (j == b->n || !is_word(b->p[j]))) best = j;
        while (j < b->n && is_label(b->p[j])) j++;
        i = j;
    }
    return best;
}

/* _EMAIL.sub(" email ", text): a match holds an @, after the whole run of local characters from
   its start (no other @), so every start in the run before an @ (from where the search is)
   gives the same domain: the first with a word boundary matches, or none does. */
static int email_sub(const Buf *in, Buf *out, int *changed) {
    Py_ssize_t pos = 0, n = in->n;
    for (Py_ssize_t r = 0; r < n; r++) {
        if (in->p[r] != '@') continue;
        Py_ssize_t s = r, end;
        while (s > pos && is_local(in->p[s - 1])) s--;
        if (s == r || (end = email_domain_end(in, r)) < 0) continue;
        while (s < r && !buf_boundary(in, s)) s++;
        if (s == r) continue;
        if (buf_putu(out, in->p + pos, s - pos) < 0 || buf_puts(out, " email ") < 0) return -1;
        pos = end;
        r = end - 1;
        *changed = 1;
    }
    return buf_putu(out, in->p + pos, n - pos);
}

/* [^\s<>"]* from i: its end */
static Py_ssize_t url_run(const Buf *b, Py_ssize_t i) {
    while (i < b->n && !is_space(b->p[i]) && b->p[i] != '<' && b->p[i] != '>' && b->p[i] != '"') i++;
    return i;
}

/* _LSDSCC_URL's first alternative at s: \b(?:https?|ftp)://|\bwww\. then [^\s<>"]+ (re.I). The end, or -1. */
static Py_ssize_t url_lead(const Buf *b, Py_ssize_t s) {
    static const char *leads[] = {"https://", "http://", "ftp://", "www."};
    if (s > 0 && is_word(b->p[s - 1])) return -1;  /* (its first letter is a word character) */
    for (int k = 0; k < 4; k++)
        if (fold_match(b, s, leads[k])) {
            Py_ssize_t from = s + (Py_ssize_t)strlen(leads[k]), end = url_run(b, from);
            return end > from ? end : -1;  /* ("https://" then nothing: "http" leaves "s://") */
        }
    return -1;
}

/* a domain ending of TLDS (re.I) at q followed by \b: its end, or -1 (at most one fits: the
   ending must be followed by a character that is not a letter) */
static Py_ssize_t tld_at(const Buf *b, Py_ssize_t q) {
    for (Py_ssize_t k = 0; k < T.n_tlds; k++) {
        Py_ssize_t end = q + T.tld_len[k];
        if (end <= b->n && fold_match(b, q, T.tlds[k]) && (end == b->n || !is_word(b->p[end]))) return end;
    }
    return -1;
}

/* _LSDSCC_URL's domain alternative from a label character: (?:[a-z0-9-]+\.)+TLD\b. The labels are
   whole, and re gives them back from the last: the match's ending is the last one in the chain of
   labels and dots that fits. A later start in the same chain (before `until`) has the same chain
   and the endings after it: the ending `tld` (-1: none) with its end `end` serves it where its dot
   comes after the start. */
typedef struct { Py_ssize_t until, tld, end; } Chain;

static void url_chain(const Buf *b, Py_ssize_t s, Chain *c) {
    Py_ssize_t i = s;
    c->tld = c->end = -1;
    for (;;) {
        while (i < b->n && is_label(b->p[i])) i++;
        if (i >= b->n || b->p[i] != '.') break;
        Py_ssize_t end = tld_at(b, ++i);
        if (end >= 0) c->tld = i, c->end = end;
        if (i >= b->n || !is_label(b->p[i])) break;
    }
    c->until = i;
}

/* what _url_token writes for the match b->p[s:e]: " url " and its trailing [.,;:!?)\]]+ */
static int url_token(const Buf *b, Py_ssize_t s, Py_ssize_t e, Buf *out) {
    Py_ssize_t t = e;
    while (t > s && b->p[t - 1] < 128 && strchr(".,;:!?)]", (int)b->p[t - 1]) && b->p[t - 1]) t--;
    return buf_puts(out, " url ") < 0 || buf_putu(out, b->p + t, e - t) < 0 ? -1 : 0;
}

/* Where a match of _LSDSCC_URL can start (may[s] != 0; a superset): up to 5 characters before a
   "://" (https), at "www." (re.I), and in the run of [a-z0-9-] and dots before a dot followed by a
   domain ending (dot_tld: a domain match runs from its start to one) */
static void url_starts(const Buf *b, unsigned char *may) {
    for (Py_ssize_t i = 0; i < b->n; i++) {
        Py_UCS4 c = b->p[i];
        if (c == ':' && i + 2 < b->n && b->p[i + 1] == '/' && b->p[i + 2] == '/')
            for (Py_ssize_t s = i > 5 ? i - 5 : 0; s < i; s++) may[s] = 1;
        else if ((c == 'w' || c == 'W') && fold_match(b, i, "www."))
            may[i] = 1;
        else if (c == '.' && dot_tld(b, i))
            for (Py_ssize_t s = i; s >= 0 && !(may[s] & 2) && (s == i || is_label(b->p[s]) || b->p[s] == '.'); s--)
                may[s] |= 2;  /* (up to the run of an earlier ending: marked from there on) */
    }
}

/* _LSDSCC_URL.sub(_url_token, text): at each start the first alternative, then the domain (with
   its path, \b(?:/[^\s<>"]*)?); the leftmost start wins */
static int url_sub(const Buf *in, Buf *out, const unsigned char *may, int *changed) {
    Py_ssize_t pos = 0, s = 0;
    Chain chain = {-1, -1, -1};
    while (s < in->n) {
        Py_UCS4 c = in->p[s];
        Py_ssize_t e = -1;
        if (!may[s]) { s++; continue; }
        if (c == 'h' || c == 'H' || c == 'f' || c == 'F' || c == 'w' || c == 'W') e = url_lead(in, s);
        if (e < 0 && is_label(c) && buf_boundary(in, s)) {
            if (s >= chain.until) url_chain(in, s, &chain);
            if (chain.tld > s + 1) e = chain.end < in->n && in->p[chain.end] == '/' ? url_run(in, chain.end + 1) : chain.end;
        }
        if (e < 0) { s++; continue; }
        if (buf_putu(out, in->p + pos, s - pos) < 0 || url_token(in, s, e, out) < 0) return -1;
        pos = s = e;
        *changed = 1;
    }
    return buf_putu(out, in->p + pos, in->n - pos);
}

/* the characters outside ASCII that re.I matches with an ASCII letter (case_folds): in a url or a
   domain ending they are left to Python */
static int has_fold(const Buf *b) {
    for (Py_ssize_t i = 0; i < b->n; i++)
        if (b->p[i] >= 128 && fold_re(b->p[i]) < 128) return 1;
    return 0;
}

static PyObject *mail_and_urls(PyObject *self, PyObject *arg) {
    if (!PyUnicode_Check(arg)) { PyErr_SetString(PyExc_TypeError, "mail_and_urls: a str, please"); return NULL; }
    if (!T.ready) { PyErr_SetString(PyExc_RuntimeError, "call configure() first"); return NULL; }
    Buf a, b;
    PyObject *result = NULL;
    int changed = 0;
    Py_ssize_t n = PyUnicode_GET_LENGTH(arg);
    if (buf_init(&a, n + 1) < 0) return NULL;
    if (!PyUnicode_AsUCS4(arg, a.p, a.cap, 0) || buf_init(&b, n + 16) < 0) { buf_free(&a); return NULL; }
    a.n = n;
    if (has_fold(&a)) { result = Py_None; Py_INCREF(result); goto done; }
    if (email_sub(&a, &b, &changed) < 0) goto done;
    buf_swap(&a, &b);
    unsigned char *may = PyMem_Calloc(a.n + 1, 1);
    if (!may) { PyErr_NoMemory(); goto done; }
    url_starts(&a, may);
    int failed = url_sub(&a, &b, may, &changed) < 0;
    PyMem_Free(may);
    if (failed) goto done;
    if (changed) result = PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, b.p, b.n);
    else { result = arg; Py_INCREF(result); }
done:
    buf_free(&a);
    buf_free(&b);
    return result;
}

static PyObject *fm_comment(PyObject *self, PyObject *args) { return fm_call(args, FM_COMMENT); }
static PyObject *fm_quotes(PyObject *self, PyObject *args) { return fm_call(args, FM_QUOTES); }
static PyObject *fm_links_(PyObject *self, PyObject *args) { return fm_call(args, FM_LINKS); }
static PyObject *fm_tags_(PyObject *self, PyObject *args) { return fm_call(args, FM_TAGS); }
static PyObject *fm_header_(PyObject *self, PyObject *args) { return fm_call(args, FM_HEADER); }
static PyObject *fm_bullets(PyObject *self, PyObject *args) { return fm_call(args, FM_BULLETS); }
static PyObject *fm_followed_head(PyObject *self, PyObject *args) { return fm_call(args, FM_HEAD); }
static PyObject *fm_indented_(PyObject *self, PyObject *args) { return fm_call(args, FM_INDENTED); }
static PyObject *fm_setext_(PyObject *self, PyObject *args) { return fm_call(args, FM_SETEXT); }
static PyObject *fm_hrule_(PyObject *self, PyObject *args) { return fm_call(args, FM_HRULE); }
/* --- end of links, quotes, spoilers, tags, headers, bullets ------------------------------------ */

/* --- apply_vocabulary(): lsdscc.corpus.vocab.Vocabulary.apply_text ------------------------- */
/* The tokens of a text (the cleaned texts of the corpus: interned where seen before, so their
   hashes are cached), and whether the text is them joined by single spaces. */
static int text_tokens(PyObject *text, PyObject *tokens, int *single) {
    int kind = PyUnicode_KIND(text);
    const void *d = PyUnicode_DATA(text);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    *single = n == 0 || (!is_space(PyUnicode_READ(kind, d, 0)) && !is_space(PyUnicode_READ(kind, d, n - 1)));
    for (Py_ssize_t i = 0; i < n;) {
        Py_UCS4 c = PyUnicode_READ(kind, d, i);
        if (is_space(c)) {
            if (c != ' ' || (i + 1 < n && is_space(PyUnicode_READ(kind, d, i + 1)))) *single = 0;
            i++;
            continue;
        }
        Py_ssize_t j = i;
        while (j < n && !is_space(PyUnicode_READ(kind, d, j))) j++;
        Slot *slot = interned_slice(kind, d, i, j - i);
        PyObject *t = slot ? (Py_INCREF(slot->s), slot->s) : PyUnicode_Substring(text, i, j);
        if (!t || PyList_Append(tokens, t) < 0) { Py_XDECREF(t); return -1; }
        Py_DECREF(t);
        i = j;
    }
    return 0;
}

/* 1 where text is tokens joined by single spaces, each an interned token in unchanged (most
   texts: no list, no new str); 0 where not; -1 on an error. The tokens of up to KEPT_BATCH at a
   time are found and hashed first, each slot fetched into the cache, then looked up (where a
   later token of a batch is not single-spaced, 0 comes before an error of an earlier token's set
   test, which a str's cached hash does not raise). */
#define KEPT_BATCH 32
static int kept_as_it_is(PyObject *text, PyObject *unchanged) {
    int kind = PyUnicode_KIND(text);
    const void *d = PyUnicode_DATA(text);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text), starts[KEPT_BATCH], lens[KEPT_BATCH];
    Py_hash_t hashes[KEPT_BATCH];
    if (!interned_cap) return 0;
    for (Py_ssize_t i = 0; i < n;) {
        int m = 0;
        for (; m < KEPT_BATCH && i < n; m++) {
            Py_ssize_t j = i;
            Py_uhash_t h = FNV_START;
            Py_UCS4 c = 0;
            while (j < n && (c = PyUnicode_READ(kind, d, j)) != ' ' && !is_space(c)) h = FNV_STEP(h, c), j++;
            if (j == i || (j < n && (c != ' ' || j + 1 == n))) return 0;  /* (not single spaces) */
            starts[m] = i, lens[m] = j - i, hashes[m] = (Py_hash_t)h;
            PREFETCH(&interned[(Py_hash_t)h & (interned_cap - 1)]);
            i = j + 1;
        }
        for (int k = 0; k < m; k++) {
            Slot *slot = find_slot(kind, (const char *)d + starts[k] * kind, lens[k], hashes[k]);
            if (!slot->s) return 0;
            int in = slot_kept(slot, unchanged);
            if (in <= 0) return in;
        }
    }
    return 1;
}

/* the characters of the str s appended to b */
static int buf_put_str(Buf *b, PyObject *s) {
    int kind = PyUnicode_KIND(s);
    const void *d = PyUnicode_DATA(s);
    Py_ssize_t n = PyUnicode_GET_LENGTH(s);
    if (buf_grow(b, n) < 0) return -1;
    for (Py_ssize_t i = 0; i < n; i++) b->p[b->n++] = PyUnicode_READ(kind, d, i);
    return 0;
}

/* apply_vocabulary on a text of tokens joined by single spaces, each of them interned (a text
   of the cleaning, most often): the tokens in unchanged as they are, the others replaced by
   rewrites[token], left out where that is empty, all joined by single spaces, without a list
   of tokens (a kept token's rewrite is itself: Vocabulary.unchanged). 1 and *out set; 0 where
   the text is not such a text (the caller's general path); -1 with the error set. */
static int apply_interned(PyObject *text, PyObject *unchanged, PyObject *rewrites, PyObject **out) {
    int kind = PyUnicode_KIND(text);
    const void *d = PyUnicode_DATA(text);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    Buf b;
    if (buf_init(&b, n + 16) < 0) return -1;
    int found = 1;
    for (Py_ssize_t i = 0; i < n && found == 1;) {
        Py_ssize_t j = i;
        Py_UCS4 c = 0;
        while (j < n && (c = PyUnicode_READ(kind, d, j)) != ' ' && !is_space(c)) j++;
        Slot *slot = NULL;
        if (j == i || (j < n && (c != ' ' || j + 1 == n)) || !(slot = interned_slice(kind, d, i, j - i))) {
            found = 0;  /* (not single spaces, or a token not interned) */
            break;
        }
        int in = slot_kept(slot, unchanged);
        if (in < 0) { found = -1; break; }
        PyObject *r = in ? (Py_INCREF(slot->s), slot->s) : PyObject_GetItem(rewrites, slot->s);
        if (!r || !PyUnicode_Check(r)) {
            if (r) PyErr_SetString(PyExc_TypeError, "rewrites: str values, please");
            Py_XDECREF(r);
            found = -1;
            break;
        }
        if (PyUnicode_GET_LENGTH(r) && ((b.n && buf_put(&b, ' ') < 0) || buf_put_str(&b, r) < 0)) found = -1;
        Py_DECREF(r);
        i = j + 1;
    }
    if (found == 1 && !(*out = PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, b.p, b.n))) found = -1;
    buf_free(&b);
    return found;
}

/* " ".join(tokens) where every token is in unchanged (the text itself where it is that join);
   else the non-empty rewrites[token] (a mapping: a dict subclass's __missing__ fills it) joined. */
static PyObject *apply_vocabulary(PyObject *self, PyObject *args) {
    PyObject *text, *unchanged, *rewrites, *result = NULL, *parts = NULL, *space = NULL;
    if (!PyArg_ParseTuple(args, "UO!O", &text, &PyFrozenSet_Type, &unchanged, &rewrites)) return NULL;
    int kept = kept_as_it_is(text, unchanged);
    if (kept) {
        if (kept > 0) Py_INCREF(text);
        return kept > 0 ? text : NULL;
    }
    int done = apply_interned(text, unchanged, rewrites, &result);
    if (done) return done > 0 ? result : NULL;
    PyObject *tokens = PyList_New(0);
    int single, all = 1;
    if (!tokens || text_tokens(text, tokens, &single) < 0) goto done;
    Py_ssize_t count = PyList_GET_SIZE(tokens);
    for (Py_ssize_t i = 0; i < count && all; i++) {
        all = PySet_Contains(unchanged, PyList_GET_ITEM(tokens, i));
        if (all < 0) goto done;
    }
    if (all && single) { Py_INCREF(text); result = text; goto done; }
    if (!(parts = PyList_New(0)) || !(space = PyUnicode_FromString(" "))) goto done;
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *token = PyList_GET_ITEM(tokens, i), *r;
        if (all) { Py_INCREF(token); r = token; } else if (!(r = PyObject_GetItem(rewrites, token))) goto done;
        int keep = PyObject_IsTrue(r);
        if (keep < 0 || (keep && PyList_Append(parts, r) < 0)) { Py_DECREF(r); goto done; }
        Py_DECREF(r);
    }
    result = PyUnicode_Join(space, parts);
done:
    Py_XDECREF(tokens);
    Py_XDECREF(parts);
    Py_XDECREF(space);
    return result;
}

static PyObject *intern_limit(PyObject *self, PyObject *args) {
    Py_ssize_t limit = -1, before = INTERN_MAX;
    if (!PyArg_ParseTuple(args, "|n", &limit)) return NULL;
    if (limit >= 0) INTERN_MAX = limit;
    return Py_BuildValue("nn", before, interned_count);
}

static PyMethodDef methods[] = {
    {"intern_limit", intern_limit, METH_VARARGS,
     "intern_limit(limit=-1): (the limit before, tokens interned); a limit >= 0 becomes the most tokens kept."},
    {"defer_counts", defer_counts, METH_O,
     "defer_counts(counts): tail and plain count into counts (a dict) once, at flush_counts() or the next "
     "defer_counts() (None: at the end of each text, as before), in the same order."},
    {"flush_counts", flush_counts, METH_NOARGS,
     "flush_counts(): the deferred counts written into defer_counts' dict (still deferred to): how many tokens were pending."},
    {"configure", configure, METH_VARARGS,
     "configure(tables): every table and trigger the code uses (lsdscc.corpus.cleaning.native_tables())."},
    {"tail", tail, METH_VARARGS,
     "tail(text, lowercase, counts=None): the tokens of cleaning.lsdscc_tail, or None; with counts (a dict), "
     "their text joined with spaces, each token counted into it."},
    {"apply_vocabulary", apply_vocabulary, METH_VARARGS,
     "apply_vocabulary(text, unchanged, rewrites): lsdscc.corpus.vocab.Vocabulary.apply_text."},
    {"plain", plain, METH_VARARGS,
     "plain(text, lowercase, literal=0): the tokens of cleaning._lsdscc_fast, or why not (1 entities, 2 quotes, "
     "links, emphasis, code or superscripts, 4 other markup, 8 e-mails or urls); literal: causes already dealt with."},
    {"emphasis", emphasis, METH_O, "emphasis(text): cleaning._emphasis(text)."},
    {"inline_code", inline_code, METH_O, "inline_code(text): cleaning._INLINE_CODE.sub(r\"\\1\", text)."},
    {"superscript", superscript, METH_O, "superscript(text): cleaning._superscript_sub(text)."},
    /* links, quotes, spoilers, tags, headers, bullets (cleaning._followed_head) */
    {"comment", fm_comment, METH_VARARGS, "comment(text): cleaning._sub_before_last(cleaning._HTML_COMMENT, \" \", text, \"-->\")."},
    {"quotes_and_spoilers", fm_quotes, METH_VARARGS, "quotes_and_spoilers(text): cleaning._quotes_and_spoilers(text)."},
    {"links", fm_links_, METH_VARARGS, "links(text): cleaning._links(text)."},
    {"tags", fm_tags_, METH_VARARGS, "tags(text): cleaning._tags(text)."},
    {"header", fm_header_, METH_VARARGS, "header(text): cleaning._HEADER.sub(\"\", text)."},
    {"bullets", fm_bullets, METH_VARARGS, "bullets(text): cleaning._BULLET_LINES.sub(text)."},
    {"followed_head", fm_followed_head, METH_VARARGS,
     "followed_head(text): cleaning._followed_head(text) (the six rules above and the three below, guarded as there), "
     "or None."},
    /* (the line rules strip_markup runs between those of followed_head) */
    {"indented_code", fm_indented_, METH_VARARGS, "indented_code(text): cleaning._INDENTED_CODE.sub(\"\", text)."},
    {"setext", fm_setext_, METH_VARARGS, "setext(text): cleaning._SETEXT_LINES.sub(text)."},
    {"hrule", fm_hrule_, METH_VARARGS, "hrule(text): cleaning._HRULE_LINES.sub(text)."},
    /* (usernames, e-mail addresses, urls) */
    {"may_name_user", may_name_user, METH_O, "may_name_user(text): cleaning.may_name_user(text)."},
    {"mail_and_urls", mail_and_urls, METH_O,
     "mail_and_urls(text): cleaning._mail_and_urls(text) (e-mail addresses, then urls), or None where it leaves it to Python."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_cleaning_native", NULL, -1, methods};

PyMODINIT_FUNC PyInit__cleaning_native(void) {
    init_classes();
    return PyModule_Create(&module);
}
