// The price library (@pydantic/genai-prices), loaded on its first use. Its tables cost each
// thread that loads them about 11 MiB and 120–270 ms; a batch worker loads its own copy of every
// module it imports, and one whose items are all of mock or operator-priced models never asks the
// library anything. The request thread loads it at start (loadPriceLibrary), so no request waits
// for it.
type Library = typeof import('@pydantic/genai-prices')

let library: Library | undefined

export function loadPriceLibrary(): Library {
  return (library ??= require('@pydantic/genai-prices') as Library)
}

export const calcPrice: Library['calcPrice'] = (...args) => loadPriceLibrary().calcPrice(...args)
