/* Optional accelerator of the outgoing MQ mapping (outgoing.to_mq):
 *
 * - assemble: an MQMD (version 2), an RFH2 and the body written into one bytes object, instead
 *   of a struct pack per structure, a str encode per folder and joins of the pieces;
 * - xml_elements: usr folders and map/stream bodies of plain values straight to UTF-8;
 * - provider_id, correlation: MsgId/CorrelId (and the <Cid> element) of JMS ids.
 *
 * Each checks everything it writes (integer ranges, byte field lengths, character field widths,
 * UTF-8 encodability, characters XML must escape or cannot carry) and returns None when anything
 * is not what it handles: the Python path (mqmd.MQMD.pack, rfh2.rfh2_bytes, xmlfolder.element)
 * then does the work and raises the MQFormatError naming the field, so errors are decided by one
 * piece of code only. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#define MQMD_V2_LENGTH 364
#define RFH2_FIXED_LENGTH 36
#define MD_FIELDS 27

static PyObject *empty_str; /* "" */

/* MQMD version 2 after StrucId, Version to MsgFlags: kind ('l' MQLONG, 'c' MQCHAR, 'b' MQBYTE), width, offset. */
static const struct {
    char kind;
    int width;
    int offset;
} md_layout[MD_FIELDS] = {
    {'l', 4, 4},    {'l', 4, 8},    {'l', 4, 12},   {'l', 4, 16},   {'l', 4, 20},   {'l', 4, 24},
    {'l', 4, 28},   {'c', 8, 32},   {'l', 4, 40},   {'l', 4, 44},   {'b', 24, 48},  {'b', 24, 72},
    {'l', 4, 96},   {'c', 48, 100}, {'c', 48, 148}, {'c', 12, 196}, {'b', 32, 208}, {'c', 32, 240},
    {'l', 4, 272},  {'c', 28, 276}, {'c', 8, 304},  {'c', 8, 312},  {'c', 4, 320},  {'b', 24, 324},
    {'l', 4, 348},  {'l', 4, 352},  {'l', 4, 356},
};
/* the 28th field, OriginalLength, is the last MQLONG at offset 360 */

static void put_long(char *out, int32_t v, int big) {
    uint32_t u = (uint32_t)v;
    if (big) {
        out[0] = (char)(u >> 24);
        out[1] = (char)(u >> 16);
        out[2] = (char)(u >> 8);
        out[3] = (char)u;
    } else {
        out[0] = (char)u;
        out[1] = (char)(u >> 8);
        out[2] = (char)(u >> 16);
        out[3] = (char)(u >> 24);
    }
}

/* An MQLONG from a Python int: 0 and *ok = 0 when it is not an int or does not fit 32 bits. */
static int32_t get_long(PyObject *o, int *ok) {
    int overflow = 0;
    long long v;
    if (!PyLong_Check(o)) {
        *ok = 0;
        return 0;
    }
    v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow || (v == -1 && PyErr_Occurred()) || v < INT32_MIN || v > INT32_MAX) {
        PyErr_Clear();
        *ok = 0;
        return 0;
    }
    return (int32_t)v;
}

/* A str's UTF-8 (NULL, error cleared, when it is not a str or holds lone surrogates). */
static const char *utf8(PyObject *o, Py_ssize_t *len) {
    const char *s;
    if (!PyUnicode_Check(o)) {
        return NULL;
    }
    s = PyUnicode_AsUTF8AndSize(o, len);
    if (s == NULL) {
        PyErr_Clear();
    }
    return s;
}

/* A blank-padded MQCHAR field: 0 when the value is not a str, not UTF-8 or too wide. */
static int put_char(char *out, PyObject *o, Py_ssize_t width) {
    Py_ssize_t n;
    const char *s = utf8(o, &n);
    if (s == NULL || n > width) {
        return 0;
    }
    memcpy(out, s, (size_t)n);
    memset(out + n, ' ', (size_t)(width - n));
    return 1;
}

static int write_md(char *out, PyObject *md, int big) {
    int i, ok = 1;
    memcpy(out, "MD  ", 4);
    for (i = 0; i < MD_FIELDS; i++) {
        PyObject *v = PyTuple_GET_ITEM(md, i);
        char *at = out + md_layout[i].offset;
        if (md_layout[i].kind == 'l') {
            int32_t x = get_long(v, &ok);
            if (!ok) {
                return 0;
            }
            put_long(at, x, big);
        } else if (md_layout[i].kind == 'c') {
            if (!put_char(at, v, md_layout[i].width)) {
                return 0;
            }
        } else {
            if (!PyBytes_Check(v) || PyBytes_GET_SIZE(v) != md_layout[i].width) {
                return 0;
            }
            memcpy(at, PyBytes_AS_STRING(v), (size_t)md_layout[i].width);
        }
    }
    {
        int32_t x = get_long(PyTuple_GET_ITEM(md, MD_FIELDS), &ok);
        if (!ok) {
            return 0;
        }
        put_long(out + 360, x, big);
    }
    return 1;
}

static void free_arrays(const char **texts, const char **few_texts, Py_ssize_t *lens, Py_ssize_t *few_lens) {
    if (texts != few_texts) {
        PyMem_Free((void *)texts);
    }
    if (lens != few_lens) {
        PyMem_Free(lens);
    }
}

PyDoc_STRVAR(assemble_doc,
    "assemble(big_endian, md, rfh2, folders, body, /) -> bytes | None\n\n"
    "MQMD (``md``: the 28 field values of a version 2 MQMD, Version first) in the given byte\n"
    "order, then, when ``rfh2`` is ``(Encoding, CodedCharSetId, Format)``, an RFH2 with\n"
    "NameValueCCSID 1208 holding ``folders`` (str or bytes, UTF-8, blank padded to multiples of\n"
    "4), then ``body``. None when a value is not one this writes (the Python path decides).");

static PyObject *assemble(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    PyObject *md, *rfh, *folders, *body, *result;
    const char *few_texts[16];
    Py_ssize_t few_lens[16];
    const char **texts = few_texts;
    Py_ssize_t *lens = few_lens;
    Py_ssize_t nfolders = 0, i, total, rfh_len = 0, body_len;
    int big, ok = 1;
    int32_t r_enc = 0, r_ccsid = 0;
    char *out;
    char fmt[8];

    (void)self;
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "assemble() takes 5 arguments");
        return NULL;
    }
    big = PyObject_IsTrue(args[0]);
    if (big < 0) {
        return NULL;
    }
    md = args[1];
    rfh = args[2];
    folders = args[3];
    body = args[4];
    if (!PyTuple_Check(md) || PyTuple_GET_SIZE(md) != MD_FIELDS + 1 || !PyBytes_Check(body)) {
        Py_RETURN_NONE;
    }
    {
        int32_t version = get_long(PyTuple_GET_ITEM(md, 0), &ok);
        if (!ok || version != 2) {
            Py_RETURN_NONE;
        }
    }
    body_len = PyBytes_GET_SIZE(body);
    total = MQMD_V2_LENGTH;
    if (rfh != Py_None) {
        if (!PyTuple_Check(rfh) || PyTuple_GET_SIZE(rfh) != 3 || !PyList_Check(folders)) {
            Py_RETURN_NONE;
        }
        r_enc = get_long(PyTuple_GET_ITEM(rfh, 0), &ok);
        r_ccsid = get_long(PyTuple_GET_ITEM(rfh, 1), &ok);
        if (!ok || !put_char(fmt, PyTuple_GET_ITEM(rfh, 2), 8)) {
            Py_RETURN_NONE;
        }
        nfolders = PyList_GET_SIZE(folders);
        if (nfolders > 16) {
            texts = PyMem_Malloc(sizeof(*texts) * (size_t)nfolders);
            lens = PyMem_Malloc(sizeof(*lens) * (size_t)nfolders);
            if (texts == NULL || lens == NULL) {
                goto nomem;
            }
        }
        rfh_len = RFH2_FIXED_LENGTH;
        for (i = 0; i < nfolders; i++) {
            PyObject *f = PyList_GET_ITEM(folders, i);
            if (PyBytes_Check(f)) {
                texts[i] = PyBytes_AS_STRING(f);
                lens[i] = PyBytes_GET_SIZE(f);
            } else {
                texts[i] = utf8(f, &lens[i]);
                if (texts[i] == NULL) {
                    goto none;
                }
            }
            /* 4 for the NameValueLength, then the folder blank padded to a multiple of 4 */
            if (lens[i] > INT32_MAX - 8 || rfh_len > INT32_MAX - 8 - lens[i]) {
                goto none;
            }
            rfh_len += 4 + lens[i] + (-lens[i] & 3);
        }
    }
    if (body_len > PY_SSIZE_T_MAX - total - rfh_len) {
        goto none;
    }
    total += rfh_len + body_len;
    result = PyBytes_FromStringAndSize(NULL, total);
    if (result == NULL) {
        free_arrays(texts, few_texts, lens, few_lens);
        return NULL;
    }
    out = PyBytes_AS_STRING(result);
    if (!write_md(out, md, big)) {
        Py_DECREF(result);
        goto none;
    }
    out += MQMD_V2_LENGTH;
    if (rfh != Py_None) {
        memcpy(out, "RFH ", 4);
        put_long(out + 4, 2, big);
        put_long(out + 8, (int32_t)rfh_len, big);
        put_long(out + 12, r_enc, big);
        put_long(out + 16, r_ccsid, big);
        memcpy(out + 20, fmt, 8);
        put_long(out + 28, 0, big);
        put_long(out + 32, 1208, big);
        out += RFH2_FIXED_LENGTH;
        for (i = 0; i < nfolders; i++) {
            Py_ssize_t pad = -lens[i] & 3;
            put_long(out, (int32_t)(lens[i] + pad), big);
            memcpy(out + 4, texts[i], (size_t)lens[i]);
            memset(out + 4 + lens[i], ' ', (size_t)pad);
            out += 4 + lens[i] + pad;
        }
    }
    memcpy(out, PyBytes_AS_STRING(body), (size_t)body_len);
    free_arrays(texts, few_texts, lens, few_lens);
    return result;

none:
    free_arrays(texts, few_texts, lens, few_lens);
    Py_RETURN_NONE;
nomem:
    free_arrays(texts, few_texts, lens, few_lens);
    return PyErr_NoMemory();
}

/* ---- usr folders, map and stream bodies: the common value types written straight to UTF-8 */

/* Output that starts in ``stack`` (most folders and bodies fit) and moves to the heap if not. */
typedef struct {
    char *data;
    Py_ssize_t len, cap;
    char stack[1024];
} buffer;

static void buffer_init(buffer *b) {
    b->data = b->stack;
    b->len = 0;
    b->cap = (Py_ssize_t)sizeof b->stack;
}

static void buffer_free(buffer *b) {
    if (b->data != b->stack) {
        PyMem_Free(b->data);
    }
}

static int grow(buffer *b, Py_ssize_t more) {
    Py_ssize_t cap;
    char *data;
    if (more > PY_SSIZE_T_MAX / 2 - b->len) {
        return 0;
    }
    if (b->len + more <= b->cap) {
        return 1;
    }
    cap = (b->len + more) * 2;
    if (b->data == b->stack) {
        data = PyMem_Malloc((size_t)cap);
        if (data != NULL) {
            memcpy(data, b->stack, (size_t)b->len);
        }
    } else {
        data = PyMem_Realloc(b->data, (size_t)cap);
    }
    if (data == NULL) {
        return 0;
    }
    b->data = data;
    b->cap = cap;
    return 1;
}

static int put(buffer *b, const char *s, Py_ssize_t n) {
    if (!grow(b, n)) {
        return 0;
    }
    memcpy(b->data + b->len, s, (size_t)n);
    b->len += n;
    return 1;
}

/* Whether a str needs no escaping and holds only characters XML 1.0 can carry: none of
 * ``& < > \r``, C0 controls other than tab and newline, U+FFFE, U+FFFF or surrogates
 * (xmlfolder._NEEDS_WORK finds none). */
static int plain_text(PyObject *s) {
    Py_ssize_t i, n = PyUnicode_GET_LENGTH(s);
    int kind = PyUnicode_KIND(s);
    const void *data = PyUnicode_DATA(s);
    for (i = 0; i < n; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        if (c < 0x20) {
            if (c != '\t' && c != '\n') {
                return 0;
            }
        } else if (c == '&' || c == '<' || c == '>' || c == 0xFFFE || c == 0xFFFF ||
                   (c >= 0xD800 && c <= 0xDFFF)) {
            return 0;
        }
    }
    return 1;
}

/* A 64-bit integer in decimal (as int.__repr__ writes it). */
static int put_decimal(buffer *b, long long x) {
    char digits[24];
    char *end = digits + sizeof digits, *p = end;
    unsigned long long u = x < 0 ? 0ULL - (unsigned long long)x : (unsigned long long)x;
    do {
        *--p = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (x < 0) {
        *--p = '-';
    }
    return put(b, p, end - p);
}

/* After ``<name``: what xmlfolder.element writes up to ``</name>`` for one value, for the types
 * it handles; 0 for any other value (the Python path decides), -1 on a memory error. ``dts`` maps
 * number types and str subclasses (Char) to their `` dt="..."``. */
static int put_value(buffer *b, PyObject *v, PyObject *dts) {
    PyTypeObject *t = Py_TYPE(v);
    Py_ssize_t n;
    const char *s;
    PyObject *dt;
    if (t == &PyUnicode_Type) {
        if (!plain_text(v) || (s = utf8(v, &n)) == NULL) {
            return 0;
        }
        return put(b, ">", 1) && put(b, s, n) ? 1 : -1;
    }
    if (t == &PyBool_Type) {
        return put(b, v == Py_True ? " dt=\"boolean\">1" : " dt=\"boolean\">0", 15) ? 1 : -1;
    }
    if (v == Py_None) {
        return put(b, " xsi:nil='true'>", 16) ? 1 : -1;
    }
    if (t == &PyBytes_Type) {
        static const char hex[] = "0123456789ABCDEF";
        Py_ssize_t i, size = PyBytes_GET_SIZE(v);
        const unsigned char *raw = (const unsigned char *)PyBytes_AS_STRING(v);
        if (size > PY_SSIZE_T_MAX / 4 || !put(b, " dt=\"bin.hex\">", 14) || !grow(b, 2 * size)) {
            return -1;
        }
        for (i = 0; i < size; i++) {
            b->data[b->len++] = hex[raw[i] >> 4];
            b->data[b->len++] = hex[raw[i] & 15];
        }
        return 1;
    }
    dt = PyDict_GetItemWithError(dts, (PyObject *)t);
    if (dt == NULL) {
        PyErr_Clear();
        return 0;
    }
    if ((s = utf8(dt, &n)) == NULL) {
        return 0;
    }
    if (PyLong_Check(v)) {
        int overflow = 0;
        long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
        if (overflow || (x == -1 && PyErr_Occurred())) {
            PyErr_Clear();
            return 0; /* outside an i8: the Python path raises */
        }
        return put(b, s, n) && put(b, ">", 1) && put_decimal(b, x) ? 1 : -1;
    }
    if (PyFloat_Check(v)) {
        double x = PyFloat_AS_DOUBLE(v);
        char *text;
        int ok;
        if (!isfinite(x)) {
            return 0; /* NaN and the infinities have their own spellings */
        }
        text = PyOS_double_to_string(x, 'r', 0, Py_DTSF_ADD_DOT_0, NULL);
        if (text == NULL) {
            return -1;
        }
        ok = put(b, s, n) && put(b, ">", 1) && put(b, text, (Py_ssize_t)strlen(text));
        PyMem_Free(text);
        return ok ? 1 : -1;
    }
    if (PyUnicode_Check(v)) {
        const char *text;
        Py_ssize_t text_len;
        if (!plain_text(v) || (text = utf8(v, &text_len)) == NULL) {
            return 0;
        }
        return put(b, s, n) && put(b, ">", 1) && put(b, text, text_len) ? 1 : -1;
    }
    return 0;
}

/* A map entry name written without escaping: bodies._PLAIN_NAME, ``[A-Za-z0-9_.\-]+``. */
static int plain_name(PyObject *name) {
    Py_ssize_t i, n;
    const Py_UCS1 *s;
    if (!PyUnicode_CheckExact(name) || !PyUnicode_IS_ASCII(name) || (n = PyUnicode_GET_LENGTH(name)) == 0) {
        return 0;
    }
    s = PyUnicode_1BYTE_DATA(name);
    for (i = 0; i < n; i++) {
        Py_UCS1 c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
              c == '.' || c == '-')) {
            return 0;
        }
    }
    return 1;
}

enum { USR = 0, MAP = 1, STREAM = 2 };

/* One element of a usr folder (``<name``), map (``<elt name="name"``) or stream (``<elt``). */
static int put_element(buffer *b, int kind, PyObject *name, PyObject *value, PyObject *good, PyObject *dts) {
    const char *s = NULL;
    Py_ssize_t n = 0;
    int done;
    if (kind == USR) {
        int found;
        if (!PyUnicode_CheckExact(name)) {
            return 0;
        }
        found = PySet_Contains(good, name);
        if (found <= 0) {
            PyErr_Clear();
            return 0;
        }
        if ((s = utf8(name, &n)) == NULL) {
            return 0;
        }
        if (!put(b, "<", 1) || !put(b, s, n)) {
            return -1;
        }
    } else if (kind == MAP) {
        if (!plain_name(name) || (s = utf8(name, &n)) == NULL) {
            return 0;
        }
        if (!put(b, "<elt name=\"", 11) || !put(b, s, n) || !put(b, "\"", 1)) {
            return -1;
        }
    } else if (!put(b, "<elt", 4)) {
        return -1;
    }
    Py_INCREF(value); /* held while a type's lookup could run code that changes the container */
    done = put_value(b, value, dts);
    Py_DECREF(value);
    if (done <= 0) {
        return done;
    }
    if (kind == USR) {
        return put(b, "</", 2) && put(b, s, n) && put(b, ">", 1) ? 1 : -1;
    }
    return put(b, "</elt>", 6) ? 1 : -1;
}

PyDoc_STRVAR(xml_elements_doc,
    "xml_elements(kind, values, good_names, dts, /) -> bytes | None\n\n"
    "The UTF-8 XML xmlfolder.element writes for a usr folder (kind 0: a dict whose names are all\n"
    "in ``good_names``, checked before), a map body (1: a dict with names of [A-Za-z0-9_.-]) or\n"
    "a stream body (2: a list), when every value is None, bool, bytes, a str needing no escaping\n"
    "or of a type ``dts`` maps to its `` dt=\"..\"`` (64-bit ints, finite floats, Char); None\n"
    "for anything else.");

static PyObject *xml_elements(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    static const char *const open_tags[] = {"<usr>", "<map>", "<stream>"};
    static const char *const close_tags[] = {"</usr>", "</map>", "</stream>"};
    PyObject *values, *good, *dts, *name, *value, *result;
    Py_ssize_t pos = 0;
    buffer b;
    int kind, done;

    (void)self;
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "xml_elements() takes 4 arguments");
        return NULL;
    }
    kind = PyLong_Check(args[0]) ? (int)PyLong_AsLong(args[0]) : -1;
    values = args[1];
    good = args[2];
    dts = args[3];
    if (kind < USR || kind > STREAM || !PyAnySet_Check(good) || !PyDict_Check(dts) ||
        !(kind == STREAM ? PyList_Check(values) : PyDict_Check(values))) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    buffer_init(&b);
    if (!put(&b, open_tags[kind], (Py_ssize_t)strlen(open_tags[kind]))) {
        goto nomem;
    }
    if (kind == STREAM) {
        for (pos = 0; pos < PyList_GET_SIZE(values); pos++) {
            done = put_element(&b, kind, NULL, PyList_GET_ITEM(values, pos), good, dts);
            if (done <= 0) {
                goto fail;
            }
        }
    } else {
        while (PyDict_Next(values, &pos, &name, &value)) {
            Py_INCREF(name);
            done = put_element(&b, kind, name, value, good, dts);
            Py_DECREF(name);
            if (done <= 0) {
                goto fail;
            }
        }
    }
    if (!put(&b, close_tags[kind], (Py_ssize_t)strlen(close_tags[kind]))) {
        goto nomem;
    }
    result = PyBytes_FromStringAndSize(b.data, b.len);
    buffer_free(&b);
    return result;

fail:
    buffer_free(&b);
    if (done == 0) {
        Py_RETURN_NONE;
    }
    return PyErr_NoMemory();
nomem:
    buffer_free(&b);
    return PyErr_NoMemory();
}

/* ---- provider message ids */

PyDoc_STRVAR(provider_id_doc,
    "provider_id(value, /) -> bytes | None\n\n"
    "The 24 bytes of ``ID:`` + 48 lower-case hex digits (not all zeros), else None.");

static int hex_digit(Py_UCS1 c) {
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    return -1;
}

static PyObject *provider_id(PyObject *self, PyObject *value) {
    const Py_UCS1 *s;
    char raw[24];
    int i, any = 0;
    (void)self;
    if (!PyUnicode_Check(value) || PyUnicode_GET_LENGTH(value) != 51 || !PyUnicode_IS_ASCII(value)) {
        Py_RETURN_NONE;
    }
    s = PyUnicode_1BYTE_DATA(value);
    if (s[0] != 'I' || s[1] != 'D' || s[2] != ':') {
        Py_RETURN_NONE;
    }
    for (i = 0; i < 24; i++) {
        int hi = hex_digit(s[3 + 2 * i]), lo = hex_digit(s[4 + 2 * i]);
        if (hi < 0 || lo < 0) {
            Py_RETURN_NONE;
        }
        raw[i] = (char)(hi << 4 | lo);
        any |= raw[i];
    }
    if (!any) {
        Py_RETURN_NONE; /* all zeros is MQMI_NONE: "no id" to MQ */
    }
    return PyBytes_FromStringAndSize(raw, 24);
}

PyDoc_STRVAR(correlation_doc,
    "correlation(value, /) -> tuple[bytes, str] | None\n\n"
    "CorrelId and the jms folder's ``<Cid>`` element for a JMSCorrelationID str: the 24 bytes of a\n"
    "provider id and no element, or its UTF-8 cut or NUL-padded to 24 bytes and ``<Cid>value</Cid>``;\n"
    "None when the value needs escaping or is not a str (the Python path decides).");

static PyObject *correlation(PyObject *self, PyObject *value) {
    PyObject *raw, *element, *result;
    const char *s;
    Py_ssize_t n;
    char padded[24];
    raw = provider_id(self, value);
    if (raw == NULL) {
        return NULL;
    }
    if (raw != Py_None) {
        result = PyTuple_Pack(2, raw, empty_str);
        Py_DECREF(raw);
        return result;
    }
    Py_DECREF(raw);
    if (!PyUnicode_CheckExact(value) || !plain_text(value) || (s = utf8(value, &n)) == NULL) {
        Py_RETURN_NONE;
    }
    memset(padded, 0, sizeof padded);
    memcpy(padded, s, (size_t)(n < 24 ? n : 24));
    raw = PyBytes_FromStringAndSize(padded, 24);
    element = PyUnicode_FromFormat("<Cid>%U</Cid>", value);
    if (raw == NULL || element == NULL) {
        Py_XDECREF(raw);
        Py_XDECREF(element);
        return NULL;
    }
    result = PyTuple_Pack(2, raw, element);
    Py_DECREF(raw);
    Py_DECREF(element);
    return result;
}

static PyMethodDef methods[] = {
    {"assemble", (PyCFunction)(void (*)(void))assemble, METH_FASTCALL, assemble_doc},
    {"xml_elements", (PyCFunction)(void (*)(void))xml_elements, METH_FASTCALL, xml_elements_doc},
    {"provider_id", provider_id, METH_O, provider_id_doc},
    {"correlation", correlation, METH_O, correlation_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_mqout", "Assembling the MQMD, RFH2 and body of outgoing MQ messages.", -1,
    methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__mqout(void) {
    empty_str = PyUnicode_FromStringAndSize("", 0);
    if (empty_str == NULL) {
        return NULL;
    }
    return PyModule_Create(&module);
}
