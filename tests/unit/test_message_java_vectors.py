"""Vectors produced by a real JDK (Temurin 25): Java serialization streams for the opt-in
ObjectMessage decoder, Double/Float.toString and the valueOf parsers used by the String
conversions of tables 3.2 and 3.7. Generated once; no JDK is needed to run these tests."""


from __future__ import annotations

import struct
from typing import Any

import pytest

from amqp_jms import JavaSerializedObject, MessageFormatException, NumberFormatException
from amqp_jms.message._javatext import (
    java_boolean_value_of,
    java_double_to_string,
    java_float_to_string,
    java_parse_double,
    java_parse_float,
    java_parse_integral,
)
from amqp_jms.types import Byte, Char, Float, Int, Short

# (raw IEEE bits in hex, Java's toString)

DOUBLE_TO_STRING = [
    ("7b35a223b6ebcc8c", "3.2169168331002324E285"),
    ("bed37ac4b6e59a22", "-4.64429E-6"),
    ("c0b4ef199999999a", "-5359.1"),
    ("c0490fa0f9096bba", "-50.1221"),
    ("40a118851eb851ec", "2188.26"),
    ("fe23d398a20857b7", "-4.149280577794113E299"),
    ("c053902a9930be0e", "-78.2526"),
    ("bfed0f94c87980f5", "-0.908152"),
    ("3fb72d468a280c8f", "0.0905346"),
    ("d460615ca77a1f95", "-2.799052100145514E98"),
    ("7b126fad2881728c", "6.853748640945571E284"),
    ("4c1f974706eb6ddb", "4.957486651540706E58"),
    ("a99538b2e3e2db37", "-2.2590052021179636E-108"),
    ("40912e6666666666", "1099.6"),
    ("c011f33333333333", "-4.4875"),
    ("9003785446fa12a0", "-1.5676174778080953E-231"),
    ("c87737b9ad7ee7bd", "-1.2640905716447861E41"),
    ("c0783f851eb851ec", "-387.97"),
    ("bfab8b1f83530637", "-0.0537958"),
    ("d22e3345ad69052b", "-7.509650978066262E87"),
    ("7830db9e4a8b7f4d", "8.905927966984022E270"),
    ("e0dd1d37313e73d8", "-3.9972513264106356E158"),
    ("beff6940a52582b5", "-2.9956E-5"),
    ("c21dddcfbc6619cd", "-3.2068857625525196E10"),
    ("ffc7a0770440afc8", "-3.3182628914548207E307"),
]

FLOAT_TO_STRING = [
    ("3705f9db", "7.985592E-6"),
    ("2a1e10b1", "1.403901E-13"),
    ("36f444ec", "7.27979E-6"),
    ("c7ab689a", "-87761.2"),
    ("909bf91", "1.658085E-33"),
    ("61f0d3cb", "5.5531E20"),
    ("9fc92b6e", "-8.519866E-20"),
    ("13b74bc5", "4.627041E-27"),
    ("8d1078b4", "-4.4518717E-31"),
    ("bff30dd8", "-1.89886"),
    ("503c307f", "1.2629179E10"),
    ("c2b803d7", "-92.0075"),
    ("84275a25", "-1.9672148E-36"),
    ("bd0258fb", "-0.03182314"),
    ("54670b94", "3.9693268E12"),
    ("38abe794", "8.19705E-5"),
    ("1b821d96", "2.1525815E-22"),
    ("3981d140", "2.47607E-4"),
    ("42913efa", "72.623"),
    ("bf4b0810", "-0.7930918"),
    ("478634c0", "68713.5"),
    ("c90c2760", "-574070.0"),
    ("c6267eb0", "-10655.672"),
    ("b5e09a9e", "-1.67343E-6"),
    ("444ef893", "827.884"),
]

# (text, [Byte, Short, Integer, Long, floatToRawIntBits, doubleToRawLongBits, Boolean] .valueOf)
VALUE_OF = [
    ('1', ['1', '1', '1', '1', '1065353216', '4607182418800017408', 'false']),
    (' 1', ['NFE', 'NFE', 'NFE', 'NFE', '1065353216', '4607182418800017408', 'false']),
    ('1 ', ['NFE', 'NFE', 'NFE', 'NFE', '1065353216', '4607182418800017408', 'false']),
    ('+1', ['1', '1', '1', '1', '1065353216', '4607182418800017408', 'false']),
    ('-0', ['0', '0', '0', '0', '-2147483648', '-9223372036854775808', 'false']),
    ('1e3', ['NFE', 'NFE', 'NFE', 'NFE', '1148846080', '4652007308841189376', 'false']),
    ('1.5f', ['NFE', 'NFE', 'NFE', 'NFE', '1069547520', '4609434218613702656', 'false']),
    ('0x1p3', ['NFE', 'NFE', 'NFE', 'NFE', '1090519040', '4620693217682128896', 'false']),
    ('0X1.8P-1d', ['NFE', 'NFE', 'NFE', 'NFE', '1061158912', '4604930618986332160', 'false']),
    ('NaN', ['NFE', 'NFE', 'NFE', 'NFE', '2143289344', '9221120237041090560', 'false']),
    ('-Infinity', ['NFE', 'NFE', 'NFE', 'NFE', '-8388608', '-4503599627370496', 'false']),
    ('Infinity', ['NFE', 'NFE', 'NFE', 'NFE', '2139095040', '9218868437227405312', 'false']),
    ('inf', ['NFE', 'NFE', 'NFE', 'NFE', 'NFE', 'NFE', 'false']),
    ('1_0', ['NFE', 'NFE', 'NFE', 'NFE', 'NFE', 'NFE', 'false']),
    ('', ['NFE', 'NFE', 'NFE', 'NFE', 'NFE', 'NFE', 'false']),
    ('.5', ['NFE', 'NFE', 'NFE', 'NFE', '1056964608', '4602678819172646912', 'false']),
    ('5.', ['NFE', 'NFE', 'NFE', 'NFE', '1084227584', '4617315517961601024', 'false']),
    ('.', ['NFE', 'NFE', 'NFE', 'NFE', 'NFE', 'NFE', 'false']),
    ('e5', ['NFE', 'NFE', 'NFE', 'NFE', 'NFE', 'NFE', 'false']),
    ('1e', ['NFE', 'NFE', 'NFE', 'NFE', 'NFE', 'NFE', 'false']),
    ('1.0E+2', ['NFE', 'NFE', 'NFE', 'NFE', '1120403456', '4636737291354636288', 'false']),
    ('\t2.5\n', ['NFE', 'NFE', 'NFE', 'NFE', '1075838976', '4612811918334230528', 'false']),
    ('\xa02', ['NFE', 'NFE', 'NFE', 'NFE', 'NFE', 'NFE', 'false']),
    ('١٢', ['12', '12', '12', '12', 'NFE', 'NFE', 'false']),
    ('128', ['NFE', '128', '128', '128', '1124073472', '4638707616191610880', 'false']),
    ('-129', ['NFE', '-129', '-129', '-129', '-1023344640', '-4584629236291076096', 'false']),
    ('32768', ['NFE', 'NFE', '32768', '32768', '1191182336', '4674736413210574848', 'false']),
    ('2147483648', ['NFE', 'NFE', 'NFE', '2147483648', '1325400064', '4746794007248502784', 'false']),
    ('9223372036854775808', ['NFE', 'NFE', 'NFE', 'NFE', '1593835520', '4890909195324358656', 'false']),
    ('1.17549435E-38', ['NFE', 'NFE', 'NFE', 'NFE', '8388608', '4039728865745034152', 'false']),
    ('3.4028236E38', ['NFE', 'NFE', 'NFE', 'NFE', '2139095040', '5183643170920245180', 'false']),
    ('1e39', ['NFE', 'NFE', 'NFE', 'NFE', '2139095040', '5190260616003865117', 'false']),
    ('1e-50', ['NFE', 'NFE', 'NFE', 'NFE', '0', '3859002664735258655', 'false']),
    ('0x1.fffffep127', ['NFE', 'NFE', 'NFE', 'NFE', '2139095039', '5183643170566569984', 'false']),
    ('+NaN', ['NFE', 'NFE', 'NFE', 'NFE', '2143289344', '9221120237041090560', 'false']),
    ('-NaN', ['NFE', 'NFE', 'NFE', 'NFE', '2143289344', '9221120237041090560', 'false']),
    ('1.0000000596046448', ['NFE', 'NFE', 'NFE', 'NFE', '1065353217', '4607182419068452864', 'false']),
    ('7.006492321624085e-46', ['NFE', 'NFE', 'NFE', 'NFE', '0', '3931642474694443008', 'false']),
    ('TRUE', ['NFE', 'NFE', 'NFE', 'NFE', 'NFE', 'NFE', 'true']),
    ('True', ['NFE', 'NFE', 'NFE', 'NFE', 'NFE', 'NFE', 'true']),
    ('true ', ['NFE', 'NFE', 'NFE', 'NFE', 'NFE', 'NFE', 'false']),
    ('-', ['NFE', 'NFE', 'NFE', 'NFE', 'NFE', 'NFE', 'false']),
    ('+', ['NFE', 'NFE', 'NFE', 'NFE', 'NFE', 'NFE', 'false']),
    ('--1', ['NFE', 'NFE', 'NFE', 'NFE', 'NFE', 'NFE', 'false']),
    ('1.5e+', ['NFE', 'NFE', 'NFE', 'NFE', 'NFE', 'NFE', 'false']),
    ('0x', ['NFE', 'NFE', 'NFE', 'NFE', 'NFE', 'NFE', 'false']),
    ('0x1', ['NFE', 'NFE', 'NFE', 'NFE', 'NFE', 'NFE', 'false']),
    ('0x1.p1', ['NFE', 'NFE', 'NFE', 'NFE', '1073741824', '4611686018427387904', 'false']),
    ('0x.8p1', ['NFE', 'NFE', 'NFE', 'NFE', '1065353216', '4607182418800017408', 'false']),
    ('1D', ['NFE', 'NFE', 'NFE', 'NFE', '1065353216', '4607182418800017408', 'false']),
    ('1F', ['NFE', 'NFE', 'NFE', 'NFE', '1065353216', '4607182418800017408', 'false']),
    ('1d ', ['NFE', 'NFE', 'NFE', 'NFE', '1065353216', '4607182418800017408', 'false']),
    ('Infinityf', ['NFE', 'NFE', 'NFE', 'NFE', 'NFE', 'NFE', 'false']),
    ('nan', ['NFE', 'NFE', 'NFE', 'NFE', 'NFE', 'NFE', 'false']),
    ('-32768', ['NFE', '-32768', '-32768', '-32768', '-956301312', '-4548635623644200960', 'false']),
    (
        '-9223372036854775808',
        ['NFE', 'NFE', 'NFE', '-9223372036854775808', '-553648128', '-4332462841530417152', 'false'],
    ),
    ('00012', ['12', '12', '12', '12', '1094713344', '4622945017495814144', 'false']),
    ('٣', ['3', '3', '3', '3', 'NFE', 'NFE', 'false']),
    ('1e400', ['NFE', 'NFE', 'NFE', 'NFE', '2139095040', '9218868437227405312', 'false']),
    ('-1e-400', ['NFE', 'NFE', 'NFE', 'NFE', '-2147483648', '-9223372036854775808', 'false']),
    ('4.9e-324', ['NFE', 'NFE', 'NFE', 'NFE', '0', '1', 'false']),
    ('2.4703282292062328e-324', ['NFE', 'NFE', 'NFE', 'NFE', '0', '1', 'false']),
    ('1.401298464324817e-45', ['NFE', 'NFE', 'NFE', 'NFE', '1', '3936146074321813504', 'false']),
    (
        '1.1541573001102570141668257619587076021321425472153376912132216602913103997707367e-15',
        ['NFE', 'NFE', 'NFE', 'NFE', '648434916', '4383351110581092352', 'false'],
    ),
    ('204558.37792401644', ['NFE', 'NFE', 'NFE', 'NFE', '1212662680', '4686268585184397016', 'false']),
    (
        '9.5038820526329058553140216591970101944752968847751617431631121117947367094144686e-17',
        ['NFE', 'NFE', 'NFE', 'NFE', '618341636', '4367194904439291904', 'false'],
    ),
    ('818398.3959701364', ['NFE', 'NFE', 'NFE', 'NFE', '1229442534', '4695277200784267524', 'false']),
    (
        '6.4934682878246352891182802125058515230193734818353176438713528911828021250585152e-15',
        ['NFE', 'NFE', 'NFE', 'NFE', '669643693', '4394737486031486976', 'false'],
    ),
    (
        '5.3627709348802454769664986351926927454769611358642578125e-5',
        ['NFE', 'NFE', 'NFE', 'NFE', '945876561', '4543038877799022592', 'false'],
    ),
    (
        '2.63061914443969726562499999999999999999999999999997369380855560302734375e+1',
        ['NFE', 'NFE', 'NFE', 'NFE', '1104311060', '4628097752306286592', 'false'],
    ),
    (
        '1.0951342710286715919706880791819770064711705766962530056695670696575994895738404e-21',
        ['NFE', 'NFE', 'NFE', 'NFE', '480607732', '4293249577785491456', 'false'],
    ),
    (
        '2.98293107199999999999999999997017068928e+9',
        ['NFE', 'NFE', 'NFE', 'NFE', '1328663530', '4748546067484639232', 'false'],
    ),
    ('373506.3598065933', ['NFE', 'NFE', 'NFE', 'NFE', '1219911756', '4690160402866185148', 'false']),
    ('83058.07291725907', ['NFE', 'NFE', 'NFE', 'NFE', '1201813769', '4680444120520149424', 'false']),
    ('768533.1110508936', ['NFE', 'NFE', 'NFE', 'NFE', '1228644690', '4694848861248399784', 'false']),
    ('-761566.7425037748', ['NFE', 'NFE', 'NFE', 'NFE', '-918950420', '-4528583016256539540', 'false']),
    ('987933.9228370374', ['NFE', 'NFE', 'NFE', 'NFE', '1232155103', '4696733499871074462', 'false']),
    ('4.855794917101797376e+18', ['NFE', 'NFE', 'NFE', 'NFE', '1585890944', '4886643983293349888', 'false']),
    ('-911666.9415835079', ['NFE', 'NFE', 'NFE', 'NFE', '-916548817', '-4527293665364198454', 'false']),
    ('-145153.95254498627', ['NFE', 'NFE', 'NFE', 'NFE', '-938622851', '-4539144572184303648', 'false']),
    (
        '1.6174633160614959592749073635786771774291830441168393850404072509263642132282257e-10',
        ['NFE', 'NFE', 'NFE', 'NFE', '791795595', '4460317289597632512', 'false'],
    ),
    ('599175.1058132285', ['NFE', 'NFE', 'NFE', 'NFE', '1225934962', '4693394087060776648', 'false']),
    ('9.85599672320e+11', ['NFE', 'NFE', 'NFE', 'NFE', '1399159378', '4786393237155741696', 'false']),
    ('171123.72701527737', ['NFE', 'NFE', 'NFE', 'NFE', '1210522863', '4685119779326747328', 'false']),
    (
        '1.3700384549715158288840655131934909150004386901855468751370038454971515828884066e-13',
        ['NFE', 'NFE', 'NFE', 'NFE', '706363564', '4414451316663779328', 'false'],
    ),
    ('-161974.8944909128', ['NFE', 'NFE', 'NFE', 'NFE', '-937546311', '-4538566609019938296', 'false']),
    (
        '1.21674723100947644415999999999999878325276899052355584e+20',
        ['NFE', 'NFE', 'NFE', 'NFE', '1624445550', '4907342830315241472', 'false'],
    ),
    (
        '6.0537938404361171112373384447839145164985207500597417094254536249389155138337396e-34',
        ['NFE', 'NFE', 'NFE', 'NFE', '139013116', '4109857364222410752', 'false'],
    ),
]

SERIALIZED = {
    "string": "aced000574000e68c3a96c6c6fc080eda0bdedb880",
    "int": (
        "aced0005737200116a6176612e6c616e672e496e746567657212e2a0a4f781873802000149000576616c7565"
        "787200106a6176612e6c616e672e4e756d62657286ac951d0b94e08b020000787000000005"
    ),
    "long": (
        "aced00057372000e6a6176612e6c616e672e4c6f6e673b8be490cc8f23df0200014a000576616c7565787200"
        "106a6176612e6c616e672e4e756d62657286ac951d0b94e08b0200007870fffffffffffffffe"
    ),
    "short": (
        "aced00057372000f6a6176612e6c616e672e53686f7274684d37133460da5202000153000576616c75657872"
        "00106a6176612e6c616e672e4e756d62657286ac951d0b94e08b0200007870012c"
    ),
    "byte": (
        "aced00057372000e6a6176612e6c616e672e427974659c4e6084ee50f51c02000142000576616c7565787200"
        "106a6176612e6c616e672e4e756d62657286ac951d0b94e08b0200007870f9"
    ),
    "float": (
        "aced00057372000f6a6176612e6c616e672e466c6f6174daedc9a2db3cf0ec02000146000576616c75657872"
        "00106a6176612e6c616e672e4e756d62657286ac951d0b94e08b02000078703f8ccccd"
    ),
    "double": (
        "aced0005737200106a6176612e6c616e672e446f75626c6580b3c24a296bfb0402000144000576616c756578"
        "7200106a6176612e6c616e672e4e756d62657286ac951d0b94e08b02000078704004000000000000"
    ),
    "bool": (
        "aced0005737200116a6176612e6c616e672e426f6f6c65616ecd207280d59cfaee0200015a000576616c7565"
        "787001"
    ),
    "char": (
        "aced0005737200136a6176612e6c616e672e436861726163746572348b47d96b1a267802000143000576616c"
        "7565787000e9"
    ),
    "bytes": "aced0005757200025b42acf317f8060854e00200007870000000030001ff",
    "ints": "aced0005757200025b494dba602676eab2a502000078700000000200000001ffffffff",
    "strings": (
        "aced0005757200135b4c6a6176612e6c616e672e537472696e673badd256e7e91d7b47020000787000000002"
        "7400017871007e0002"
    ),
    "list": (
        "aced0005737200136a6176612e7574696c2e41727261794c6973747881d21d99c7619d03000149000473697a"
        "65787000000003770400000003737200116a6176612e6c616e672e496e746567657212e2a0a4f78187380200"
        "0149000576616c7565787200106a6176612e6c616e672e4e756d62657286ac951d0b94e08b02000078700000"
        "000174000374776f7372000e6a6176612e6c616e672e4c6f6e673b8be490cc8f23df0200014a000576616c75"
        "657871007e0003000000000000000378"
    ),
    "map": (
        "aced0005737200176a6176612e7574696c2e4c696e6b6564486173684d617034c04e5c106cc0fb0200015a00"
        "0b6163636573734f72646572787200116a6176612e7574696c2e486173684d61700507dac1c31660d1030002"
        "46000a6c6f6164466163746f724900097468726573686f6c6478703f4000000000000c770800000010000000"
        "067400026964737200116a6176612e6c616e672e496e746567657212e2a0a4f781873802000149000576616c"
        "7565787200106a6176612e6c616e672e4e756d62657286ac951d0b94e08b0200007870000000077400046e61"
        "6d6574000677696467657474000474616773737200136a6176612e7574696c2e41727261794c6973747881d2"
        "1d99c7619d03000149000473697a657870000000027704000000027400016174000162787400057072696365"
        "737200106a6176612e6c616e672e446f75626c6580b3c24a296bfb0402000144000576616c75657871007e00"
        "054023000000000000740003726177757200025b42acf317f8060854e0020000787000000003010203740004"
        "6e6f6e65707800"
    ),
    "date": (
        "aced00057372000e6a6176612e7574696c2e44617465686a81014b5974190300007870770800000000000000"
        "0078"
    ),
    "null": "aced000570",
    "hashtable": (
        "aced0005737200136a6176612e7574696c2e486173687461626c6513bb0f25214ae4b803000246000a6c6f61"
        "64466163746f724900097468726573686f6c6478703f4000000000000877080000000b000000017400016b73"
        "7200116a6176612e6c616e672e496e746567657212e2a0a4f781873802000149000576616c7565787200106a"
        "6176612e6c616e672e4e756d62657286ac951d0b94e08b02000078700000000178"
    ),
    "treemap": (
        "aced0005737200116a6176612e7574696c2e547265654d61700cc1f63e2d256ae60300014c000a636f6d7061"
        "7261746f727400164c6a6176612f7574696c2f436f6d70617261746f723b7870707704000000027400016173"
        "7200116a6176612e6c616e672e496e746567657212e2a0a4f781873802000149000576616c7565787200106a"
        "6176612e6c616e672e4e756d62657286ac951d0b94e08b020000787000000001740001627371007e00040000"
        "000278"
    ),
}


JAVA_ALLOW = ["java.lang", "java.util"]


def _bits_double(hex_bits: str) -> float:
    return float(struct.unpack(">d", bytes.fromhex(hex_bits.rjust(16, "0")))[0])


def _bits_float(hex_bits: str) -> float:
    return float(struct.unpack(">f", bytes.fromhex(hex_bits.rjust(8, "0")))[0])


@pytest.mark.parametrize(("bits", "java"), DOUBLE_TO_STRING)
def test_double_to_string_matches_java(bits: str, java: str) -> None:
    assert java_double_to_string(_bits_double(bits)) == java


@pytest.mark.parametrize(("bits", "java"), FLOAT_TO_STRING)
def test_float_to_string_matches_java(bits: str, java: str) -> None:
    assert java_float_to_string(_bits_float(bits)) == java


def _outcome(parse: Any) -> str:
    try:
        return str(parse())
    except NumberFormatException:
        return "NFE"


@pytest.mark.parametrize(("text", "java"), VALUE_OF)
def test_value_of_matches_java(text: str, java: list[str]) -> None:
    mine = [
        _outcome(lambda: java_parse_integral(text, -(2**7), 2**7 - 1, "byte")),
        _outcome(lambda: java_parse_integral(text, -(2**15), 2**15 - 1, "short")),
        _outcome(lambda: java_parse_integral(text, -(2**31), 2**31 - 1, "int")),
        _outcome(lambda: java_parse_integral(text, -(2**63), 2**63 - 1, "long")),
        _outcome(lambda: struct.unpack(">i", struct.pack(">f", java_parse_float(text)))[0]),
        _outcome(lambda: struct.unpack(">q", struct.pack(">d", java_parse_double(text)))[0]),
        "true" if java_boolean_value_of(text) else "false",
    ]
    assert mine == java


def _decode(name: str) -> Any:
    return JavaSerializedObject(bytes.fromhex(SERIALIZED[name])).decode(allow=JAVA_ALLOW)


@pytest.mark.parametrize(
    ("name", "expected"),
    [("string", "héllo\x00😀"), ("int", Int(5)), ("long", -2), ("short", Short(300)), ("byte", Byte(-7)),
     ("float", Float(1.1)), ("double", 2.5), ("bool", True), ("char", Char("é")),
     ("bytes", b"\x00\x01\xff"), ("ints", [1, -1]), ("strings", ["x", "x"]),
     ("list", [1, "two", 3]), ("null", None), ("hashtable", {"k": 1}),
     ("treemap", {"a": 1, "b": 2})],
)
def test_decode_java_serialized_values(name: str, expected: Any) -> None:
    value = _decode(name)
    assert value == expected
    assert type(value) is type(expected)


def test_decode_nested_map_with_back_references() -> None:
    assert _decode("map") == {"id": 7, "name": "widget", "tags": ["a", "b"], "price": 9.5,
                              "raw": b"\x01\x02\x03", "none": None}


def test_decode_refuses_classes_not_allowed() -> None:
    obj = JavaSerializedObject(bytes.fromhex(SERIALIZED["int"]))
    with pytest.raises(MessageFormatException, match=r"java\.lang\.Integer is not in the allow-list"):
        obj.decode(allow=["java.lang.String"])
    assert obj.decode(allow=["java.lang.Integer", "java.lang.Number"]) == 5
    with pytest.raises(MessageFormatException, match=r"java\.util"):
        JavaSerializedObject(bytes.fromhex(SERIALIZED["map"])).decode(allow=["java.lang"])


def test_decode_refuses_classes_it_does_not_rebuild() -> None:
    with pytest.raises(MessageFormatException, match=r"java\.util\.Date"):
        _decode("date")


@pytest.mark.parametrize(
    "data", [b"", b"\xac\xed\x00\x05", b"not java", bytes.fromhex(SERIALIZED["int"])[:-2],
             bytes.fromhex(SERIALIZED["string"]) + b"\x00", b"\xac\xed\x00\x05\x71\x00\x7e\x00\x09"],
)
def test_decode_malformed_streams(data: bytes) -> None:
    with pytest.raises(MessageFormatException):
        JavaSerializedObject(data).decode(allow=["*"])


def test_decode_needs_an_explicit_allow_list() -> None:
    obj = JavaSerializedObject(bytes.fromhex(SERIALIZED["string"]))
    with pytest.raises(TypeError):
        obj.decode()  # type: ignore[call-arg]
    assert obj.decode(allow="java.lang") == "héllo\x00😀"
