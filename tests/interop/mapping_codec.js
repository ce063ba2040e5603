// rhea as an independent AMQP 1.0 codec for the mapping interop test (test_mapping_rhea.py).
//
// Input (JSON on stdin):
//   {"encode": [{"name": ..., "msg": {<rhea message fields>}}, ...],
//    "decode": [{"name": ..., "hex": "<AMQP message encoding>"}, ...]}
// Values in "msg" may be typed: {"$t": "byte"|"ubyte"|"short"|"ushort"|"int"|"uint"|"long"|
//   "ulong"|"float"|"double"|"char"|"timestamp"|"symbol"|"string"|"binary"|"uuid"|"list"|"map",
//   "v": ...} (binary/uuid as hex, char as a code point). The body may be a section:
//   {"$section": "data"|"sequence", "v": [...]}, several sections when "v" has several entries.
// Output (last line of stdout): {"encoded": {name: hex}, "decoded": {name: <message as JSON>}}.
'use strict';
const rhea = require('rhea');
const types = rhea.types;
const message = rhea.message;

const WRAP = {
    byte: types.wrap_byte, ubyte: types.wrap_ubyte, short: types.wrap_short, ushort: types.wrap_ushort,
    int: types.wrap_int, uint: types.wrap_uint, long: types.wrap_long, ulong: types.wrap_ulong,
    float: types.wrap_float, double: types.wrap_double, char: types.wrap_char,
    timestamp: types.wrap_timestamp, symbol: types.wrap_symbol, string: types.wrap_string,
    binary: (v) => types.wrap_binary(Buffer.from(v, 'hex')),
    uuid: (v) => types.wrap_uuid(Buffer.from(v, 'hex')),
    list: (v) => types.wrap_list(v.map(typed)),
    map: (v) => types.wrap_map(Object.fromEntries(Object.entries(v).map(([k, x]) => [k, typed(x)]))),
};

function typed(v) {
    if (v === null || typeof v !== 'object') return v;
    if (Array.isArray(v)) return v.map(typed);
    if (v.$t !== undefined) return WRAP[v.$t](v.v);
    if (v.$section === 'data') return message.data_sections(v.v.map((h) => Buffer.from(h, 'hex')));
    if (v.$section === 'sequence') return message.sequence_sections(v.v.map((l) => l.map(typed)));
    const out = {};
    for (const [k, x] of Object.entries(v)) out[k] = typed(x);
    return out;
}

function plain(v) {
    if (v === null || v === undefined) return null;
    if (Buffer.isBuffer(v)) return {binary: v.toString('hex')};
    if (v instanceof Date) return v.getTime();
    if (Array.isArray(v)) return v.map(plain);
    if (typeof v === 'object') {
        if (v.typecode !== undefined && v.content !== undefined) {
            return {section: v.typecode, content: plain(v.content), multiple: !!v.multiple};
        }
        const out = {};
        for (const [k, x] of Object.entries(v)) if (typeof x !== 'function') out[k] = plain(x);
        return out;
    }
    return v;
}

let input = '';
process.stdin.on('data', (d) => { input += d; });
process.stdin.on('end', () => {
    const req = JSON.parse(input || '{}');
    const encoded = {};
    for (const c of req.encode || []) {
        const msg = {};
        for (const [k, v] of Object.entries(c.msg)) msg[k] = typed(v);
        encoded[c.name] = message.encode(msg).toString('hex');
    }
    const decoded = {};
    for (const c of req.decode || []) {
        decoded[c.name] = plain(message.decode(Buffer.from(c.hex, 'hex')));
    }
    console.log(JSON.stringify({encoded, decoded}));
});
