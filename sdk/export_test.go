package sdk

// DecodeParams is decodeParams, for the tests of the wire encoding.
var DecodeParams = decodeParams
