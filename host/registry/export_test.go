package registry

// GoMemLimit is goMemLimit, for tests.
var GoMemLimit = goMemLimit
