'use strict';
// Lambda@Edge origin-request handler of the cell router. config.json and
// the routing image it names (routing.img) are baked into the function
// package next to this file by the router stack (Go: edge.Package); they
// are read once per container, at cold start. A package that does not
// load answers every request 503 and says so in the logs.
const { loadHandler } = require('./routing');

exports.handler = loadHandler(__dirname);
