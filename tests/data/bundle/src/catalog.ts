// The shop's catalog: products made up front.
export interface Product {
  sku: string;
  name: string;
  cents: number;
  tags: string[];
}

export function loadCatalog(count: number): Product[] {
  const products: Product[] = [];
  for (let i = 0; i < count; i++) {
    products.push({
      sku: `sku-${i}`,
      name: `Product ${i}`,
      cents: 100 + ((i * 7919) % 5000),
      tags: [i % 2 === 0 ? 'even' : 'odd', `group-${i % 13}`],
    });
  }
  return products;
}

export function findProduct(products: Product[], sku: string): Product | undefined {
  for (const p of products) {
    if (p.sku === sku) return p;
  }
  return undefined;
}
