// The bundled app of the source-map tests: fills carts, prices them and renders receipts.
import { loadCatalog, findProduct } from './catalog';
import { Cart, cartTotal } from './cart';
import { renderReceipt } from './format';

const kept: unknown[] = [];

function shop(rounds: number): number {
  const products = loadCatalog(3000);
  kept.push(products);
  let sum = 0;
  for (let r = 0; r < rounds; r++) {
    const cart = new Cart();
    for (let i = 0; i < 400; i++) {
      const product = findProduct(products, `sku-${(i * 31 + r) % 3000}`);
      if (product) cart.add(product, 1 + (i % 4));
    }
    sum += cartTotal(cart);
    kept.push(cart, renderReceipt(cart));
  }
  return sum;
}

// Kept alive to the end, so that the heap profile written at exit names their script.
(globalThis as Record<string, unknown>).app = { kept, shop };
const total = shop(Number(process.argv[2] ?? '60'));
if (process.env.SNAPSHOT) {
  require('node:v8').writeHeapSnapshot(process.env.SNAPSHOT);
}
if (total === 42) console.log(total);
