/* The C half of the reader's subreddit prefilter (lsdscc/corpus/sources.py, _scan_block).
 *
 * scan(block, key, wanted, max_line) -> (exact, lines)
 *
 * block: whole lines joined by "\n" (any bytes); key: b'"subreddit"';
 * wanted: a tuple of lowercase ASCII names (bytes); max_line: sources.MAX_LINE_BYTES. A line is
 * skipped when it is at most max_line bytes, starts with "{", ends with "}" or "}\r", holds the
 * key exactly once (overlapping occurrences count), followed by [ \t\r]*:[ \t\r]*" and a plain
 * value (no backslash, no byte >= 0x80) with its closing quote, holds no \u006 / \u007 escape,
 * its value lowercased (ASCII) is not a wanted name, and it is valid UTF-8 (checked last, on
 * such lines only: the lines that are parsed are checked by the parser). exact lists (index, line, offset) of
 * every other line, lines is the number of lines: the line rule of sources._scan_block, read in
 * place, never split into lines (tests/test_lsdscc_sources_prefilter.py compares the two).
 *
 * shape(line, max_depth, digits) -> flags: the checks sources._parse makes before parsing a line
 * (sources._python_shape_flags; tests/test_lsdscc_sources_prefilter.py compares the two).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

/* the first key in [p, end): the C library's memmem where it has one (glibc's reads a line of
   a record at a few bytes a cycle; memchr stops at every quote of it), else memchr and memcmp */
static const char *find_key(const char *p, const char *end, const char *key, Py_ssize_t len)
{
#if defined(__GLIBC__) || defined(__APPLE__) || defined(__FreeBSD__)
    if (end - p < len)
        return NULL;
    return memmem(p, (size_t)(end - p), key, (size_t)len);
#endif
    while (end - p >= len) {
        const char *q = memchr(p, key[0], (size_t)(end - p - len + 1));
        if (q == NULL)
            return NULL;
        if (memcmp(q, key, (size_t)len) == 0)
            return q;
        p = q + 1;
    }
    return NULL;
}

static int has_letter_escape(const char *p, const char *end)
{
    while (p < end) {
        const char *q = memchr(p, '\\', (size_t)(end - p));
        if (q == NULL)
            return 0;
        if (end - q >= 5 && q[1] == 'u' && q[2] == '0' && q[3] == '0' && (q[4] == '6' || q[4] == '7'))
            return 1;
        p = q + 1;
    }
    return 0;
}

static const char *skip_space(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\r'))
        p++;
    return p;
}

/* The plain value after the key at k: its first byte in *name, its length returned; -1 if none. */
static Py_ssize_t plain_value(const char *k, Py_ssize_t keylen, const char *end, const char **name)
{
    const char *p = skip_space(k + keylen, end);
    if (p >= end || *p != ':')
        return -1;
    p = skip_space(p + 1, end);
    if (p >= end || *p != '"')
        return -1;
    const char *start = ++p;
    while (p < end && *p != '"') {
        if (*p == '\\' || (unsigned char)*p >= 0x80)
            return -1;
        p++;
    }
    if (p >= end)
        return -1;
    *name = start;
    return p - start;
}

static int is_wanted(const char *name, Py_ssize_t len, PyObject *wanted)
{
    Py_ssize_t n = PyTuple_GET_SIZE(wanted);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PyTuple_GET_ITEM(wanted, i);
        if (PyBytes_GET_SIZE(item) != len)
            continue;
        const char *w = PyBytes_AS_STRING(item);
        Py_ssize_t j = 0;
        while (j < len) {
            char c = name[j];
            if (c >= 'A' && c <= 'Z')
                c = (char)(c - 'A' + 'a');
            if (c != w[j])
                break;
            j++;
        }
        if (j == len)
            return 1;
    }
    return 0;
}

/* 1 when [p, e) is UTF-8 that Python's strict decoder takes (no overlong form, no surrogate,
   nothing past U+10FFFF); ASCII eight bytes at a time */
static int valid_utf8(const unsigned char *p, const unsigned char *e)
{
    while (p < e) {
        uint64_t word;
        while (e - p >= 8 && (memcpy(&word, p, 8), (word & 0x8080808080808080ULL) == 0))
            p += 8;
        if (p >= e)
            break;
        unsigned char c = *p;
        Py_ssize_t n = c < 0x80 ? 1 : c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
        if (n == 0 || e - p < n)
            return 0;
        for (Py_ssize_t i = 1; i < n; i++)
            if ((p[i] & 0xC0) != 0x80)
                return 0;
        if ((c == 0xE0 && p[1] < 0xA0) || (c == 0xED && p[1] > 0x9F) || (c == 0xF0 && p[1] < 0x90)
            || (c == 0xF4 && p[1] > 0x8F))
            return 0;
        p += n;
    }
    return 1;
}

/* 1: the line [s, e) is skipped (another subreddit's, by the rule above); 0: it must be parsed. */
static int skipped_line(const char *s, const char *e, const char *key, Py_ssize_t keylen,
                        PyObject *wanted, Py_ssize_t max_line)
{
    if (e - s > max_line || e == s || *s != '{')
        return 0;
    if (!(e[-1] == '}' || (e - s >= 2 && e[-1] == '\r' && e[-2] == '}')))
        return 0;
    const char *k = find_key(s, e, key, keylen);
    if (k == NULL || find_key(k + 1, e, key, keylen) != NULL)
        return 0;
    const char *name;
    Py_ssize_t len = plain_value(k, keylen, e, &name);
    if (len < 0 || is_wanted(name, len, wanted) || has_letter_escape(s, e))  /* (a wanted line: no escape scan) */
        return 0;
    return valid_utf8((const unsigned char *)s, (const unsigned char *)e);
}

static PyObject *scan(PyObject *self, PyObject *args)
{
    PyObject *block, *wanted;
    const char *key;
    Py_ssize_t keylen, max_line;
    if (!PyArg_ParseTuple(args, "Sy#O!n", &block, &key, &keylen, &PyTuple_Type, &wanted, &max_line))
        return NULL;
    if (keylen < 1)
        return PyErr_Format(PyExc_ValueError, "empty key");
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(wanted); i++)
        if (!PyBytes_Check(PyTuple_GET_ITEM(wanted, i)))
            return PyErr_Format(PyExc_TypeError, "wanted names must be bytes");
    const char *data = PyBytes_AS_STRING(block);
    const char *end = data + PyBytes_GET_SIZE(block);
    PyObject *exact = PyList_New(0);
    if (exact == NULL)
        return NULL;
    Py_ssize_t index = 0;
    const char *s = data;
    for (;;) {
        const char *e = memchr(s, '\n', (size_t)(end - s));
        if (e == NULL)
            e = end;
        if (!skipped_line(s, e, key, keylen, wanted, max_line)) {
            PyObject *item = Py_BuildValue("(ny#n)", index, s, (Py_ssize_t)(e - s), (Py_ssize_t)(s - data));
            if (item == NULL || PyList_Append(exact, item) < 0) {
                Py_XDECREF(item);
                Py_DECREF(exact);
                return NULL;
            }
            Py_DECREF(item);
        }
        index++;
        if (e == end)
            break;
        s = e + 1;
    }
    return Py_BuildValue("(Nn)", exact, index);
}

/* how many bytes c in [p, e), counted up to more than limit (memchr: a few calls on a line of a record) */
static Py_ssize_t count_upto(const char *p, const char *e, char c, Py_ssize_t limit)
{
    Py_ssize_t n = 0;
    while (n <= limit && (p = memchr(p, c, (size_t)(e - p))) != NULL) {
        n++;
        p++;
    }
    return n;
}

static inline int is_digit(char c) { return (unsigned)(c - '0') < 10u; }

/* whether [p, e) holds a run of `run` ASCII digits: such a run covers one of the bytes
   run - 1, 2 * run - 1, ... (every run-th byte), so only the runs of digits through those are measured */
static int has_digit_run(const char *p, const char *e, Py_ssize_t run)
{
    Py_ssize_t n = e - p;
    for (Py_ssize_t at = run - 1; at < n; at += run) {
        if (!is_digit(p[at]))
            continue;
        Py_ssize_t lo = at, hi = at + 1;
        while (lo > 0 && is_digit(p[lo - 1]) && hi - lo < run)
            lo--;
        while (hi < n && is_digit(p[hi]) && hi - lo < run)
            hi++;
        if (hi - lo >= run)
            return 1;
    }
    return 0;
}

/* shape(line, max_depth, digits) -> flags: 1 when the line holds more than max_depth bytes
   "[" or "{", 2 when it holds a run of `digits` ASCII digits: sources._parse's two checks of a
   line (sources._python_shape_flags, which reads its translated copy), without a copy and
   without reading every byte twice */
static PyObject *shape(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3 || !PyBytes_Check(args[0]) || !PyLong_Check(args[1]) || !PyLong_Check(args[2]))
        return PyErr_Format(PyExc_TypeError, "shape(line: bytes, max_depth: int, digits: int)");
    Py_ssize_t max_depth = PyLong_AsSsize_t(args[1]), digits = PyLong_AsSsize_t(args[2]);
    if ((max_depth == -1 || digits == -1) && PyErr_Occurred())
        return NULL;
    if (digits < 1)
        return PyErr_Format(PyExc_ValueError, "digits: at least 1");
    if (max_depth < 0)
        max_depth = -1;  /* (any line holds more than a negative number of brackets) */
    const char *p = PyBytes_AS_STRING(args[0]);
    const char *e = p + PyBytes_GET_SIZE(args[0]);
    Py_ssize_t brackets = count_upto(p, e, '[', max_depth);
    if (brackets <= max_depth)
        brackets += count_upto(p, e, '{', max_depth - brackets);
    long flags = brackets > max_depth ? 1 : 0;
    if (has_digit_run(p, e, digits))
        flags |= 2;
    return PyLong_FromLong(flags);
}

static PyMethodDef methods[] = {
    {"scan", scan, METH_VARARGS, "scan(block, key, wanted, max_line) -> (exact, lines)"},
    {"shape", (PyCFunction)(void (*)(void))shape, METH_FASTCALL,
     "shape(line, max_depth, digits) -> flags: 1 more than max_depth '[' or '{', 2 a run of digits ASCII digits"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_sources_native", NULL, -1, methods};

PyMODINIT_FUNC PyInit__sources_native(void) { return PyModule_Create(&module); }
