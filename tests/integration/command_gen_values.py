"""Values the differential test's generators draw from: integers and floats at and past the
edges of what Redis parses, and the members of the generated sets."""

BAD_INTS = [b"", b" 1", b"1 ", b"1.5", b"abc", b"9223372036854775808", b"-9223372036854775809",
            b"0x10", b"+1", b"1e3", b"--1", b"\x00", b"99999999999999999999"]
EDGE_INTS = [b"0", b"-0", b"1", b"-1", b"9223372036854775807", b"-9223372036854775808",
             b"9223372036854775806", b"-9223372036854775807", b"10000", b"9999", b"007"]
FLOATS = [b"0.1", b"-0.1", b"1.5", b"1e10", b"3.0e-5", b"-2.5E+3", b"10", b"1e308", b"-1e308",
          b"0", b"-0", b"inf", b"-inf", b"nan", b"+inf", b"1.", b".5", b" 1.0", b"1.0 ", b"",
          b"abc", b"5.0000000000000001", b"1e-320", b"17976931348623157e292"]

# Floats whose sums print as 300+ digits: kept out of generated hashes, where such a value would
# turn the hash into a hash table (whose field order differs between the servers).
HUGE_FLOATS = {b"1e308", b"-1e308", b"17976931348623157e292"}

# Set keys that only ever hold a few integers (always intsets), and set members.
INT_SET_KEYS = [b"si1", b"si2", b"si3"]
INT_MEMBERS = [b"0", b"1", b"-1", b"2", b"3", b"7", b"42", b"-100", b"32767", b"32768", b"-32769",
               b"2147483648", b"-9223372036854775808", b"9223372036854775807"]
STR_MEMBERS = [b"a", b"b", b"c", b"", b"01", b"-0", b"+1", b"1.0", b" 1", "член".encode(),
               b"\x00\xff"]
